//! Running the stead binary: `status --json` and `stop --json` on a state directory.

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
        let mut cmd = Command::new(&self.exe);
        cmd.arg("--state-dir")
            .arg(dir)
            .args([command, "--json"])
            .env_remove("RUST_BACKTRACE")
            .stdin(Stdio::null());
        // The bench's own STEAD_* settings must not leak into the measured servers.
        for (name, _) in std::env::vars_os() {
            if name.to_string_lossy().starts_with("STEAD_") {
                cmd.env_remove(name);
            }
        }
        cmd.envs(env.iter().copied());
        let out = cmd
            .output()
            .with_context(|| format!("running {}", self.exe.display()))?;
        if !out.status.success() {
            bail!(
                "stead {command} on {} failed ({}): {}",
                dir.display(),
                out.status,
                String::from_utf8_lossy(&out.stderr).trim()
            );
        }
        Ok(out)
    }
}
