//! Running the stead binary on a state directory: `status --json`, `stop --json`, and
//! any other command as one whole client process.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use anyhow::{Context, bail};

/// The stead binary and the directory its benchmark state directories live in.
pub struct Stead {
    exe: PathBuf,
    root: PathBuf,
}

/// What `stead status --json` answered.
pub struct Status {
    pub pid: u32,
    pub version: String,
}

impl Stead {
    pub fn new(exe: PathBuf, root: &Path) -> Self {
        Self {
            exe,
            root: root.to_path_buf(),
        }
    }

    pub fn exe(&self) -> &Path {
        &self.exe
    }

    /// A state directory under the bench's root (not created: stead creates it).
    pub fn dir(&self, name: &str) -> PathBuf {
        self.root.join(name)
    }

    /// `stead --state-dir DIR status --json`, with `env` added. A server it spawns
    /// inherits that environment, which is how figures set its timings.
    pub fn status(&self, dir: &Path, env: &[(&str, &str)]) -> anyhow::Result<Status> {
        let out = self.run(dir, "status", env)?;
        let json: serde_json::Value =
            serde_json::from_slice(&out.stdout).context("stead status --json printed no JSON")?;
        let pid = json["pid"].as_u64().context("no pid in status")?;
        Ok(Status {
            pid: u32::try_from(pid)?,
            version: json["version"].as_str().unwrap_or("?").to_string(),
        })
    }

    /// `stead --state-dir DIR stop --json`: returns once the server process is gone.
    pub fn stop(&self, dir: &Path) -> anyhow::Result<()> {
        self.run(dir, "stop", &[]).map(drop)
    }

    fn run(&self, dir: &Path, command: &str, env: &[(&str, &str)]) -> anyhow::Result<Output> {
        let mut cmd = self.command(dir, &[command, "--json"]);
        cmd.envs(env.iter().copied());
        checked(&mut cmd, command, dir)
    }

    /// `stead --state-dir DIR ARGS...` with the bench's environment rules applied:
    /// no RUST_BACKTRACE, none of the bench's own STEAD_* settings, stdin from
    /// /dev/null. The caller chooses stdout and stderr (never the bench's own).
    pub fn command(&self, dir: &Path, args: &[&str]) -> Command {
        let mut cmd = Command::new(&self.exe);
        cmd.arg("--state-dir")
            .arg(dir)
            .args(args)
            .stdin(Stdio::null());
        scrub(&mut cmd);
        cmd
    }

    /// One whole `stead --state-dir DIR ARGS...` process that must succeed; its output is
    /// captured and dropped.
    pub fn call(&self, dir: &Path, args: &[&str]) -> anyhow::Result<()> {
        checked(&mut self.command(dir, args), &args.join(" "), dir).map(drop)
    }

    /// One whole `stead --state-dir DIR ARGS...` process that must succeed and print JSON
    /// (ARGS include `--json`).
    pub fn json(&self, dir: &Path, args: &[&str]) -> anyhow::Result<serde_json::Value> {
        self.json_with(dir, &[], args)
    }

    /// [`Stead::json`] with `env` added: for a directory whose server must always start
    /// with that environment, should the call start one.
    pub fn json_with(
        &self,
        dir: &Path,
        env: &[(&str, &str)],
        args: &[&str],
    ) -> anyhow::Result<serde_json::Value> {
        let what = args.join(" ");
        let mut cmd = self.command(dir, args);
        cmd.envs(env.iter().copied());
        let out = checked(&mut cmd, &what, dir)?;
        serde_json::from_slice(&out.stdout).with_context(|| format!("stead {what} printed no JSON"))
    }

    /// `stead --state-dir DIR stop --json` with `env` added.
    pub fn stop_with(&self, dir: &Path, env: &[(&str, &str)]) -> anyhow::Result<()> {
        self.run(dir, "stop", env).map(drop)
    }
}

/// Removes RUST_BACKTRACE and the bench's own STEAD_* settings from `cmd`'s environment:
/// they must not leak into what is measured.
pub fn scrub(cmd: &mut Command) -> &mut Command {
    cmd.env_remove("RUST_BACKTRACE");
    for (name, _) in std::env::vars_os() {
        if name.to_string_lossy().starts_with("STEAD_") {
            cmd.env_remove(name);
        }
    }
    cmd
}

/// Runs `cmd` with stdout and stderr captured; a failure carries its stderr.
fn checked(cmd: &mut Command, what: &str, dir: &Path) -> anyhow::Result<Output> {
    let out = cmd
        .output()
        .with_context(|| format!("running {}", cmd.get_program().display()))?;
    if !out.status.success() {
        bail!(
            "stead {what} on {} failed ({}): {}",
            dir.display(),
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    Ok(out)
}
