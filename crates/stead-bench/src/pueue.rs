//! A pueue daemon for comparison, confined to a temporary directory.
//!
//! `pueued -c CONFIG` uses only CONFIG, whose `shared` section points every file pueue
//! keeps (state, logs, certificates, secret, pid file, socket, aliases) into the
//! directory. Every pueue process also runs with HOME and XDG_* set to that directory,
//! so nothing reaches the real home directory even if a path were missed.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};

/// The pueue client and daemon executables.
#[derive(Debug, Clone)]
pub struct Binaries {
    pub client: PathBuf,
    pub daemon: PathBuf,
}

/// Finds `pueue` (the given path, else on PATH, else in ~/.cargo/bin) and `pueued`
/// next to it.
pub fn find(explicit: Option<&Path>) -> Option<Binaries> {
    let client = match explicit {
        Some(path) => path.to_path_buf(),
        None => {
            let path = std::env::var_os("PATH").unwrap_or_default();
            let cargo_bin = std::env::var_os("HOME").map(|h| Path::new(&h).join(".cargo/bin"));
            std::env::split_paths(&path)
                .chain(cargo_bin)
                .map(|dir| dir.join("pueue"))
                .find(|p| p.is_file())?
        }
    };
    let daemon = client.with_file_name("pueued");
    (client.is_file() && daemon.is_file()).then_some(Binaries { client, daemon })
}

/// A running pueued serving a private directory.
pub struct Pueue {
    bins: Binaries,
    dir: PathBuf,
    config: PathBuf,
    daemon: Child,
    pub version: String,
}

impl Pueue {
    /// Writes the config into `dir`, starts pueued and waits until it answers.
    pub fn start(bins: Binaries, dir: &Path) -> anyhow::Result<Self> {
        for sub in ["data", "run"] {
            std::fs::create_dir_all(dir.join(sub))?;
        }
        let config = dir.join("pueue.yml");
        std::fs::write(&config, config_text(dir))?;
        let log = std::fs::File::create(dir.join("pueued.log"))?;
        let daemon = confined(&bins.daemon, dir)
            .arg("-c")
            .arg(&config)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .with_context(|| format!("starting {}", bins.daemon.display()))?;
        let version = confined(&bins.daemon, dir)
            .arg("--version")
            .stdin(Stdio::null())
            .stderr(Stdio::null())
            .output()
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
            .unwrap_or_default();
        let mut pueue = Self {
            bins,
            dir: dir.to_path_buf(),
            config,
            daemon,
            version,
        };
        let deadline = Instant::now() + Duration::from_secs(10);
        while pueue.status().is_err() {
            if let Some(status) = pueue.daemon.try_wait()? {
                bail!("pueued exited ({status}); see {}/pueued.log", dir.display());
            }
            if Instant::now() >= deadline {
                bail!("pueued did not answer within 10 s");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        Ok(pueue)
    }

    pub fn bins(&self) -> &Binaries {
        &self.bins
    }

    pub fn pid(&self) -> u32 {
        self.daemon.id()
    }

    /// One whole `pueue status --json` process.
    pub fn status(&self) -> anyhow::Result<()> {
        let out = self
            .client(["status", "--json"])
            .output()
            .context("running pueue")?;
        if !out.status.success() || out.stdout.is_empty() {
            bail!("pueue status failed ({})", out.status);
        }
        Ok(())
    }

    /// One whole client process that must succeed, its output captured and dropped.
    pub fn call<const N: usize>(&self, args: [&str; N]) -> anyhow::Result<()> {
        let out = self
            .client(args)
            .stdout(Stdio::null())
            .output()
            .context("running pueue")?;
        if !out.status.success() {
            bail!(
                "pueue {} failed ({}): {}",
                args.join(" "),
                out.status,
                String::from_utf8_lossy(&out.stderr).trim()
            );
        }
        Ok(())
    }

    /// One whole `pueue status --json` process, parsed.
    pub fn status_json(&self) -> anyhow::Result<serde_json::Value> {
        let out = self
            .client(["status", "--json"])
            .output()
            .context("running pueue")?;
        if !out.status.success() {
            bail!("pueue status failed ({})", out.status);
        }
        serde_json::from_slice(&out.stdout).context("pueue status --json printed no JSON")
    }

    /// Asks the daemon to shut down and reaps it (SIGKILL if it takes over 5 s).
    pub fn stop(mut self) {
        let _ = self.client(["shutdown"]).output();
        let deadline = Instant::now() + Duration::from_secs(5);
        while matches!(self.daemon.try_wait(), Ok(None)) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
        }
        let _ = self.daemon.kill();
        let _ = self.daemon.wait();
    }

    fn client<const N: usize>(&self, args: [&str; N]) -> Command {
        let mut cmd = confined(&self.bins.client, &self.dir);
        cmd.arg("-c")
            .arg(&self.config)
            .args(args)
            .stdin(Stdio::null())
            .stderr(Stdio::piped());
        cmd
    }
}

/// A command for a pueue executable with HOME and XDG_* pointing into `dir`.
fn confined(program: &Path, dir: &Path) -> Command {
    let mut cmd = Command::new(program);
    cmd.env_remove("RUST_BACKTRACE");
    for (name, _) in std::env::vars_os() {
        let n = name.to_string_lossy();
        if n.starts_with("XDG_") || n.starts_with("PUEUE_") {
            cmd.env_remove(&name);
        }
    }
    let home: &OsStr = dir.as_os_str();
    cmd.env("HOME", home);
    for var in ["CONFIG", "DATA", "STATE", "CACHE"] {
        cmd.env(format!("XDG_{var}_HOME"), home);
    }
    cmd.env("XDG_RUNTIME_DIR", dir.join("run"));
    cmd
}

fn config_text(dir: &Path) -> String {
    let d = dir.display();
    format!(
        "shared:\n  pueue_directory: {d}/data\n  runtime_directory: {d}/run\n  alias_file: {d}/pueue_aliases.yml\n  use_unix_socket: true\n  unix_socket_path: {d}/run/pueue.socket\n  pid_path: {d}/run/pueue.pid\n  daemon_cert: {d}/data/certs/daemon.cert\n  daemon_key: {d}/data/certs/daemon.key\n  shared_secret_path: {d}/data/shared_secret\n"
    )
}
