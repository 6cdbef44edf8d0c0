//! A PostgreSQL server of one test's own, so the test may restart it without disturbing
//! the tests that share the machine's server: `initdb` into a temporary directory, run
//! as the `postgres` user (PostgreSQL refuses to run as root), on a free loopback port.
//! The guard stops it (immediate shutdown, then SIGKILL of the postmaster) even when the
//! test fails, and nothing it starts holds the test's output.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

pub struct PrivatePostgres {
    dir: tempfile::TempDir,
    bin: PathBuf,
    pub port: u16,
}

impl PrivatePostgres {
    pub fn start() -> Self {
        let bin = bin_dir();
        let dir = tempfile::Builder::new()
            .prefix("stead-pg.")
            .tempdir_in("/tmp")
            .unwrap();
        let data = dir.path().join("data");
        chown_to_postgres(dir.path());
        let port = crate::api::free_port();
        as_postgres(
            &bin.join("initdb"),
            &[
                "-D",
                data.to_str().unwrap(),
                "-A",
                "trust",
                "-U",
                "postgres",
                "--no-sync",
            ],
        );
        let pg = Self { dir, bin, port };
        pg.ctl(&["start", "-w", "-t", "30"]);
        pg
    }

    pub fn url(&self) -> String {
        format!("postgres://postgres@127.0.0.1:{}/postgres", self.port)
    }

    /// A fast restart: sessions are cut, the server comes back on the same port.
    pub fn restart(&self) {
        self.ctl(&["restart", "-m", "fast", "-w", "-t", "30"]);
    }

    /// Stops it (fast: sessions cut) until [`PrivatePostgres::start_again`].
    pub fn stop(&self) {
        self.ctl(&["stop", "-m", "fast", "-w", "-t", "30"]);
    }

    pub fn start_again(&self) {
        self.ctl(&["start", "-w", "-t", "30"]);
    }

    fn data(&self) -> PathBuf {
        self.dir.path().join("data")
    }

    fn ctl(&self, args: &[&str]) {
        let options = format!(
            "-p {} -k {} -c listen_addresses=127.0.0.1 -c fsync=off",
            self.port,
            self.dir.path().display()
        );
        let data = self.data();
        let log = self.dir.path().join("server.log");
        let mut all = vec![
            "-D",
            data.to_str().unwrap(),
            "-o",
            &options,
            "-l",
            log.to_str().unwrap(),
        ];
        all.extend_from_slice(args);
        as_postgres(&self.bin.join("pg_ctl"), &all);
    }
}

impl Drop for PrivatePostgres {
    fn drop(&mut self) {
        let data = self.data();
        let _ = Command::new("runuser")
            .args(["-u", "postgres", "--"])
            .arg(self.bin.join("pg_ctl"))
            .args([
                "-D",
                data.to_str().unwrap(),
                "stop",
                "-m",
                "immediate",
                "-w",
            ])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
        // Should pg_ctl fail, the postmaster's pid file names what to kill.
        if let Ok(pidfile) = std::fs::read_to_string(data.join("postmaster.pid"))
            && let Some(pid) = pidfile.lines().next().and_then(|l| l.trim().parse().ok())
        {
            crate::harness::signal(pid, libc::SIGKILL);
        }
    }
}

fn bin_dir() -> PathBuf {
    let out = Command::new("pg_config")
        .arg("--bindir")
        .output()
        .expect("pg_config (Debian's postgresql) is installed: run scripts/ensure-postgres");
    let bin = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
    // Debian's pg_config names the client's directory; the server's is beside it.
    if bin.join("initdb").exists() {
        return bin;
    }
    let mut found: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .expect("/usr/lib/postgresql holds the server")
        .flatten()
        .map(|e| e.path().join("bin"))
        .filter(|b| b.join("initdb").exists())
        .collect();
    found.sort();
    found.pop().expect("a PostgreSQL server's binaries")
}

fn chown_to_postgres(dir: &Path) {
    let status = Command::new("chown")
        .args(["postgres:postgres", dir.to_str().unwrap()])
        .status()
        .unwrap();
    assert!(
        status.success(),
        "cannot hand {} to postgres",
        dir.display()
    );
}

fn as_postgres(program: &Path, args: &[&str]) {
    let out = Command::new("runuser")
        .args(["-u", "postgres", "--"])
        .arg(program)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{} {args:?} failed: {}{}",
        program.display(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}
