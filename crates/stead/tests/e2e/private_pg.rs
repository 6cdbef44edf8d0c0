//! A PostgreSQL server of one test's own, so the test may restart it without disturbing
//! the tests that share the machine's server: `initdb` into a temporary directory, run
//! as the `postgres` user (PostgreSQL refuses to run as root), on a free loopback port.
//! The guard stops it (immediate shutdown, then SIGKILL of the postmaster) even when the
//! test fails, and nothing it starts holds the test's output.
//!
//! [`PrivatePostgres::start_tls`] starts one that speaks only TLS: a CA and a server
//! certificate made with `openssl` in the same temporary directory, `ssl = on`, and a
//! pg_hba.conf of `hostssl` lines alone, so a plain connection is refused.
//! [`PrivatePostgres::start_self_signed`] starts the same with the certificate the
//! PostgreSQL manual tells how to make: self-signed, and a CA's.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

pub struct PrivatePostgres {
    dir: tempfile::TempDir,
    bin: PathBuf,
    pub port: u16,
    /// What the server listens on (`listen_addresses`).
    listen: String,
}

/// The certificates of a server started with [`PrivatePostgres::start_tls`].
pub struct Certs {
    /// The CA that signed the server's certificate (for `localhost` and 127.0.0.1).
    pub ca: PathBuf,
    /// A CA that signed nothing the server shows.
    pub other_ca: PathBuf,
}

/// The certificates of a server started with [`PrivatePostgres::start_self_signed`].
pub struct SelfSigned {
    /// The server's own: self-signed, a CA's (`basicConstraints CA:TRUE`), naming
    /// `localhost` in its Common Name alone (no subjectAltName).
    pub cert: PathBuf,
    /// Another made the same way, which the server does not show.
    pub other: PathBuf,
}

impl PrivatePostgres {
    pub fn start() -> Self {
        Self::start_configured("127.0.0.1", "", "")
    }

    /// One listening on `listen` (`listen_addresses`), with `conf` added to
    /// postgresql.conf and `hba` to pg_hba.conf.
    pub fn start_configured(listen: &str, conf: &str, hba: &str) -> Self {
        let pg = Self::init(listen);
        let data = pg.data();
        for (file, extra) in [("postgresql.conf", conf), ("pg_hba.conf", hba)] {
            let mut f = std::fs::OpenOptions::new()
                .append(true)
                .open(data.join(file))
                .unwrap();
            std::io::Write::write_all(&mut f, format!("\n{extra}\n").as_bytes()).unwrap();
        }
        pg.ctl(&["start", "-w", "-t", "30"]);
        pg
    }

    /// The URL of its `postgres` database at `host`.
    pub fn url_at(&self, host: &str) -> String {
        format!("postgres://postgres@{host}:{}/postgres", self.port)
    }

    /// A server that accepts TLS connections only, on 127.0.0.1 and 127.0.0.2 (an
    /// address its certificate does not name).
    pub fn start_tls() -> (Self, Certs) {
        let (pg, tls) = Self::init_tls();
        let certs = Certs {
            ca: tls.join("ca.crt"),
            other_ca: tls.join("other-ca.crt"),
        };
        make_ca(&tls, "ca", "stead test CA");
        make_ca(&tls, "other-ca", "stead other test CA");
        openssl(
            &tls,
            &[
                "req",
                "-new",
                "-newkey",
                "ec",
                "-pkeyopt",
                "ec_paramgen_curve:prime256v1",
                "-nodes",
                "-keyout",
                "server.key",
                "-out",
                "server.csr",
                "-subj",
                "/CN=localhost",
            ],
        );
        std::fs::write(
            tls.join("server.ext"),
            "subjectAltName=DNS:localhost,IP:127.0.0.1\n\
             basicConstraints=critical,CA:FALSE\n\
             keyUsage=critical,digitalSignature\n\
             extendedKeyUsage=serverAuth\n",
        )
        .unwrap();
        openssl(
            &tls,
            &[
                "x509",
                "-req",
                "-in",
                "server.csr",
                "-CA",
                "ca.crt",
                "-CAkey",
                "ca.key",
                "-CAcreateserial",
                "-days",
                "2",
                "-extfile",
                "server.ext",
                "-out",
                "server.crt",
            ],
        );
        pg.serve_tls(&tls);
        (pg, certs)
    }

    /// A server as [`PrivatePostgres::start_tls`]'s, showing a certificate made by the
    /// PostgreSQL manual's recipe ("To create a simple self-signed certificate for the
    /// server"), for `localhost`.
    pub fn start_self_signed() -> (Self, SelfSigned) {
        let (pg, tls) = Self::init_tls();
        for name in ["server", "other"] {
            let (crt, key) = (format!("{name}.crt"), format!("{name}.key"));
            openssl(
                &tls,
                &[
                    "req",
                    "-new",
                    "-x509",
                    "-days",
                    "365",
                    "-nodes",
                    "-text",
                    "-out",
                    &crt,
                    "-keyout",
                    &key,
                    "-subj",
                    "/CN=localhost",
                ],
            );
        }
        pg.serve_tls(&tls);
        let certs = SelfSigned {
            cert: tls.join("server.crt"),
            other: tls.join("other.crt"),
        };
        (pg, certs)
    }

    /// Initialized, on 127.0.0.1 and 127.0.0.2 (an address no certificate names), with
    /// a directory for its certificates.
    fn init_tls() -> (Self, PathBuf) {
        let pg = Self::init("127.0.0.1,127.0.0.2");
        let tls = pg.dir.path().join("tls");
        std::fs::create_dir(&tls).unwrap();
        (pg, tls)
    }

    /// Starts it with `tls/server.crt` and `tls/server.key`, accepting TLS connections
    /// only.
    fn serve_tls(&self, tls: &Path) {
        // PostgreSQL reads a key only if its own user owns it, readable by nobody else.
        let key = tls.join("server.key");
        chown_to_postgres(&key);
        std::fs::set_permissions(&key, std::os::unix::fs::PermissionsExt::from_mode(0o600))
            .unwrap();
        chown_to_postgres(&tls.join("server.crt"));
        chown_to_postgres(tls);

        let data = self.data();
        let mut conf = std::fs::OpenOptions::new()
            .append(true)
            .open(data.join("postgresql.conf"))
            .unwrap();
        std::io::Write::write_all(
            &mut conf,
            format!(
                "\nssl = on\nssl_cert_file = '{}'\nssl_key_file = '{}'\n",
                tls.join("server.crt").display(),
                key.display()
            )
            .as_bytes(),
        )
        .unwrap();
        // TLS or nothing: no `host` (plain or TLS) nor `local` line.
        std::fs::write(
            data.join("pg_hba.conf"),
            "hostssl all all 127.0.0.1/32 trust\nhostssl all all 127.0.0.2/32 trust\n",
        )
        .unwrap();
        self.ctl(&["start", "-w", "-t", "30"]);
    }

    /// Initialized, not started: the guard exists from here on.
    fn init(listen: &str) -> Self {
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
        Self {
            dir,
            bin,
            port,
            listen: listen.to_string(),
        }
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
            "-p {} -k {} -c listen_addresses={} -c fsync=off",
            self.port,
            self.dir.path().display(),
            self.listen
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

/// A self-signed CA in `dir`: `NAME.crt` and `NAME.key`.
fn make_ca(dir: &Path, name: &str, subject: &str) {
    let (key, crt, subj) = (
        format!("{name}.key"),
        format!("{name}.crt"),
        format!("/CN={subject}"),
    );
    openssl(
        dir,
        &[
            "req",
            "-x509",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:prime256v1",
            "-nodes",
            "-keyout",
            &key,
            "-out",
            &crt,
            "-days",
            "2",
            "-subj",
            &subj,
            "-addext",
            "basicConstraints=critical,CA:TRUE",
            "-addext",
            "keyUsage=critical,keyCertSign,cRLSign",
        ],
    );
}

fn openssl(dir: &Path, args: &[&str]) {
    crate::harness::run_checked(
        Command::new("openssl").args(args).current_dir(dir),
        &format!("openssl {args:?}"),
    );
}
