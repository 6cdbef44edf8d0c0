//! `stead install` and `stead uninstall`: the server as a user service of the
//! platform's service manager, a systemd user unit or a launchd agent.
//!
//! Both commands write or remove one file and print the commands to run next; with
//! `--now` they run them too: `install --now` loads and starts the service
//! (`launchctl bootstrap`, `systemctl --user enable --now`) and waits until its server
//! serves the state directory, `uninstall --now` stops and unloads it first
//! (`launchctl bootout`, `systemctl --user disable --now`). The tools are found on
//! `PATH`, so the tests give stand-ins that record what they were asked.
//!
//! What both files must get right: each run is watched by a monitor that the server
//! starts in a session of its own so that it outlives the server. A service manager
//! that, when the server exits, kills everything the service ever started would cut
//! every run in flight, so the unit and the agent tell it to stop the server only.
//!
//! The file names the executable running this command and the resolved state
//! directory. The state directory is resolved (and created) without starting a server.
//! A file stead wrote carries a marker, so `uninstall` removes only what `install`
//! wrote, and `install` replaces a different file only with `--force`.

use std::fs;
use std::io;
use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use serde::Serialize;
use stead_client::paths::StatePaths;
use stead_protocol::exit;

use super::output::{self, OutputArgs};

/// The systemd user unit's name.
const UNIT: &str = "stead.service";
/// The launchd agent's label, and the stem of its plist's name.
const LABEL: &str = "dev.stead";
/// The agent's stdout and stderr, in the state directory's `logs/`.
const LAUNCHD_LOG: &str = "launchd.log";
/// In every file `install` writes: what `uninstall` looks for before removing one.
const MARKER: &str = "Installed by stead install";

#[derive(Debug, Clone, Copy, clap::Args)]
#[group(required = true, multiple = false)]
pub struct Manager {
    /// A systemd user unit: $XDG_CONFIG_HOME/systemd/user/stead.service
    /// [default XDG_CONFIG_HOME: ~/.config]
    #[arg(long)]
    systemd: bool,
    /// A launchd agent: ~/Library/LaunchAgents/dev.stead.plist
    #[arg(long)]
    launchd: bool,
}

#[derive(Debug, clap::Args)]
pub struct InstallArgs {
    #[command(flatten)]
    manager: Manager,
    /// Replace an existing file that differs (another state directory or executable, or
    /// a file stead did not write)
    #[arg(long)]
    force: bool,
    /// Print the file to stdout instead of writing it
    #[arg(long, conflicts_with_all = ["json", "now"])]
    print: bool,
    /// Also load and start the service (after the gate, when it replaces a loaded one),
    /// and wait until its server serves the state directory
    #[arg(long)]
    now: bool,
    #[command(flatten)]
    format: OutputArgs,
}

#[derive(Debug, clap::Args)]
pub struct UninstallArgs {
    #[command(flatten)]
    manager: Manager,
    /// Stop and unload the service first (the runs in flight go on)
    #[arg(long)]
    now: bool,
    #[command(flatten)]
    format: OutputArgs,
}

#[derive(Debug, Serialize)]
struct Installed {
    path: PathBuf,
    written: bool,
    /// The file was there already, byte for byte.
    already: bool,
    /// What is left to run (none with `--now`).
    next: Vec<String>,
    /// What `--now` ran, in order.
    ran: Vec<String>,
    /// With `--now`: the pid of the server the service started.
    #[serde(skip_serializing_if = "Option::is_none")]
    server_pid: Option<u32>,
}

#[derive(Debug, Serialize)]
struct Uninstalled {
    path: PathBuf,
    removed: bool,
    /// There was nothing to remove.
    already: bool,
    next: Vec<String>,
    /// What `--now` ran, in order.
    ran: Vec<String>,
}

/// A command to run next, and what it is for.
struct Step {
    why: &'static str,
    command: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Systemd,
    Launchd,
}

impl Manager {
    fn kind(self) -> Kind {
        if self.launchd {
            Kind::Launchd
        } else {
            Kind::Systemd
        }
    }
}

impl Kind {
    fn flag(self) -> &'static str {
        match self {
            Kind::Systemd => "--systemd",
            Kind::Launchd => "--launchd",
        }
    }

    /// Where the file goes, from `$HOME` and `$XDG_CONFIG_HOME` as they are now.
    fn path(self) -> anyhow::Result<PathBuf> {
        Ok(match self {
            Kind::Systemd => config_home()?.join("systemd/user").join(UNIT),
            Kind::Launchd => home()?
                .join("Library/LaunchAgents")
                .join(format!("{LABEL}.plist")),
        })
    }
}

pub fn install(dir: Option<&Path>, args: InstallArgs) -> anyhow::Result<i32> {
    let kind = args.manager.kind();
    let paths = StatePaths::resolve(dir)?;
    let exe = std::env::current_exe().context("failed to find the stead executable")?;
    // The unit's `stead serve` hands over to the steadd beside it: without one it would
    // fail at every start.
    super::daemon::program()?;
    // On Linux a replaced binary reads as `/path/stead (deleted)`: a unit naming that
    // would never start.
    if !exe.is_file() {
        bail!(
            "the running stead executable {} no longer exists; run the installed one",
            exe.display()
        );
    }
    let exe = unit_text(&exe, "the stead executable's path")?;
    let state = unit_text(paths.dir(), "the state directory's path")?;
    let content = match kind {
        Kind::Systemd => systemd_unit(exe, state),
        Kind::Launchd => {
            let log = paths.logs_dir().join(LAUNCHD_LOG);
            launchd_plist(exe, state, unit_text(&log, "the log's path")?)
        }
    };
    if args.print {
        output::text(&content)?;
        return Ok(exit::SUCCESS);
    }

    let path = kind.path()?;
    let existing = read_if_present(&path)?;
    let already = existing.as_deref() == Some(content.as_bytes());
    let replaced = existing.is_some() && !already;
    if replaced && !args.force {
        let old = String::from_utf8_lossy(existing.as_deref().unwrap_or_default());
        if old.contains(MARKER) {
            bail!(
                "{} was written by stead install for another executable or state directory; \
                 pass --force to replace it (`stead install {} --print` shows the new one)",
                path.display(),
                kind.flag()
            );
        }
        bail!(
            "{} exists and was not written by stead install; refusing to replace it \
             (pass --force to replace it anyway)",
            path.display()
        );
    }
    if !already {
        if kind == Kind::Launchd {
            // launchd opens the log before the server could create its directory.
            fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(paths.logs_dir())
                .with_context(|| format!("failed to create {}", paths.logs_dir().display()))?;
        }
        write_file(&path, content.as_bytes())
            .with_context(|| format!("failed to write {}", path.display()))?;
    }

    let steps = install_steps(kind, &path, paths.dir(), replaced);
    let (ran, server_pid) = if args.now {
        let Some(ran) = load(kind, &path, &paths, replaced, args.format.json)? else {
            return Ok(exit::TEMP_FAIL);
        };
        (ran, Some(wait_serving(&paths, args.format.json)?))
    } else {
        (Vec::new(), None)
    };
    let installed = Installed {
        path,
        written: !already,
        already,
        next: if args.now {
            Vec::new()
        } else {
            steps.iter().map(|s| s.command.clone()).collect()
        },
        ran,
        server_pid,
    };
    output::show_with(&installed, args.format, || {
        let path = installed.path.display();
        let mut out = if already {
            format!("already installed: {path}\n")
        } else if replaced {
            format!("replaced {path}\n")
        } else {
            format!("wrote {path}\n")
        };
        out.push_str(&format!(
            "  runs  {} --state-dir {} serve\n",
            shell_words::quote(exe),
            shell_words::quote(state)
        ));
        match server_pid {
            Some(pid) => out.push_str(&format!("loaded; its server (pid {pid}) serves\n")),
            None => out.push_str(&render_steps(&steps)),
        }
        out.push_str(&restart_hint(kind, paths.dir()));
        out
    })?;
    Ok(exit::SUCCESS)
}

/// Removes the file `install` wrote. The state directory plays no part: whatever
/// directory the installed file names, there is one unit (or agent) per user.
pub fn uninstall(_dir: Option<&Path>, args: UninstallArgs) -> anyhow::Result<i32> {
    let kind = args.manager.kind();
    let path = kind.path()?;
    let Some(existing) = read_if_present(&path)? else {
        let result = Uninstalled {
            path,
            removed: false,
            already: true,
            next: Vec::new(),
            ran: Vec::new(),
        };
        output::show_with(&result, args.format, || {
            format!(
                "stead is not installed ({} does not exist)\n",
                result.path.display()
            )
        })?;
        return Ok(exit::SUCCESS);
    };
    if !String::from_utf8_lossy(&existing).contains(MARKER) {
        bail!(
            "{} was not written by stead install (it lacks the line \"{MARKER}\"); \
             refusing to remove it",
            path.display()
        );
    }
    let ran = if args.now {
        unload(kind, args.format.json)?
    } else {
        Vec::new()
    };
    if kind == Kind::Systemd {
        // `systemctl disable` needs the unit file to find the symlinks that enable it:
        // removed first, the unit would stay wanted by default.target, dangling.
        let wants = path
            .parent()
            .unwrap_or(Path::new("."))
            .join("default.target.wants")
            .join(UNIT);
        if fs::symlink_metadata(&wants).is_ok() {
            bail!(
                "{UNIT} is still enabled ({} exists); run `systemctl --user disable --now {UNIT}` \
                 first, then `stead uninstall --systemd` again",
                wants.display()
            );
        }
    }
    fs::remove_file(&path).with_context(|| format!("failed to remove {}", path.display()))?;

    let mut ran = ran;
    let steps = match kind {
        Kind::Systemd if args.now => {
            ran.push(run_tool(
                &["systemctl", "--user", "daemon-reload"],
                args.format.json,
            )?);
            Vec::new()
        }
        Kind::Systemd => vec![Step {
            why: "make systemd forget it",
            command: "systemctl --user daemon-reload".into(),
        }],
        Kind::Launchd if args.now => Vec::new(),
        Kind::Launchd => vec![Step {
            why: "if the agent is loaded, stop and unload it",
            command: format!("launchctl bootout gui/{}/{LABEL}", uid()),
        }],
    };
    let uninstalled = Uninstalled {
        path,
        removed: true,
        already: false,
        next: steps.iter().map(|s| s.command.clone()).collect(),
        ran,
    };
    output::show_with(&uninstalled, args.format, || {
        format!(
            "removed {}\n{}",
            uninstalled.path.display(),
            render_steps(&steps)
        )
    })?;
    Ok(exit::SUCCESS)
}

/// The systemd user unit running `EXE --state-dir DIR serve`.
fn systemd_unit(exe: &str, dir: &str) -> String {
    format!(
        "# {MARKER}; `stead uninstall --systemd` removes it.
[Unit]
Description=stead job server for {description}

[Service]
Type=simple
ExecStart={exe_word} --state-dir {dir_word} serve
# Stop the server only. Each run is watched by a monitor the server starts in a session
# of its own, so the run outlives the server and the next server adopts it. A session is
# no way out of the unit's control group, though, and the default KillMode=control-group
# would kill every monitor and run in it whenever the server exits: on
# `systemctl --user stop`, on `stead stop`, on a crash.
KillMode=process
Restart=on-failure
# Exit status 1 means another server already serves this state directory (or took it
# over): starting again would only meet it again.
RestartPreventExitStatus=1
RestartSec=2
# The server logs to stderr and to DIR/logs/server.log as well.
StandardOutput=journal
StandardError=journal

[Install]
WantedBy=default.target
",
        description = dir.replace('%', "%%"),
        exe_word = systemd_word(exe, true),
        dir_word = systemd_word(dir, false),
    )
}

/// The launchd agent running `EXE --state-dir DIR serve`. XML comments may not contain
/// two hyphens in a row, so the ones here name no flags.
fn launchd_plist(exe: &str, dir: &str, log: &str) -> String {
    let args: String = [exe, "--state-dir", dir, "serve"]
        .iter()
        .map(|a| format!("\t\t<string>{}</string>\n", xml_escape(a)))
        .collect();
    format!(
        r#"<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
<!-- {MARKER}: stead uninstall removes it. -->
<plist version="1.0">
<dict>
	<key>Label</key>
	<string>{LABEL}</string>
	<key>ProgramArguments</key>
	<array>
{args}	</array>
	<key>RunAtLoad</key>
	<true/>
	<!-- Start it again after a crash, not after a clean stop. -->
	<key>KeepAlive</key>
	<dict>
		<key>SuccessfulExit</key>
		<false/>
	</dict>
	<!-- When the server exits, launchd kills what is left in its process group. Each
	     run's monitor starts in a session of its own to outlive the server (the next
	     server adopts the run); this makes sure launchd never sweeps up a monitor or a
	     run either, even one caught before it left the group. -->
	<key>AbandonProcessGroup</key>
	<true/>
	<!-- The server logs to DIR/logs/server.log as well. -->
	<key>StandardOutPath</key>
	<string>{log}</string>
	<key>StandardErrorPath</key>
	<string>{log}</string>
</dict>
</plist>
"#,
        log = xml_escape(log),
    )
}

/// What to run after `install`, in order.
fn install_steps(kind: Kind, path: &Path, dir: &Path, replaced: bool) -> Vec<Step> {
    let mut steps = Vec::new();
    match kind {
        Kind::Systemd => {
            steps.push(Step {
                why: "enable and start it",
                command: format!(
                    "systemctl --user daemon-reload && systemctl --user enable --now {UNIT}"
                ),
            });
            if replaced {
                steps.push(Step {
                    why: "if it was running, restart it to apply the change (after the gate)",
                    command: format!("{} && systemctl --user restart {UNIT}", gate(dir)),
                });
            }
            steps.push(Step {
                why: "check it",
                command: "systemctl --user status stead".into(),
            });
        }
        Kind::Launchd => {
            let uid = uid();
            if replaced {
                steps.push(Step {
                    why: "if the old agent is loaded, unload it first (after the gate)",
                    command: format!("{} && launchctl bootout gui/{uid}/{LABEL}", gate(dir)),
                });
            }
            steps.push(Step {
                why: "load and start it",
                command: format!("launchctl bootstrap gui/{uid} {}", quote(path)),
            });
            steps.push(Step {
                why: "check it",
                command: format!("launchctl print gui/{uid}/{LABEL}"),
            });
        }
    }
    steps
}

/// `install --now`: loads and starts the service written at `path`; the commands run.
/// `None` when the gate deferred the restart of a loaded service it replaces (nothing was
/// stopped). Progress goes to stderr unless the answer is JSON.
fn load(
    kind: Kind,
    path: &Path,
    paths: &StatePaths,
    replaced: bool,
    quiet: bool,
) -> anyhow::Result<Option<Vec<String>>> {
    let mut ran = Vec::new();
    let path = unit_text(path, "the service file's path")?;
    match kind {
        Kind::Systemd => {
            ran.push(run_tool(&["systemctl", "--user", "daemon-reload"], quiet)?);
            ran.push(run_tool(
                &["systemctl", "--user", "enable", "--now", UNIT],
                quiet,
            )?);
            if replaced {
                // Running the old unit's command line: restarted into the new one.
                if !pass_gate(paths, quiet)? {
                    return Ok(None);
                }
                ran.push(format!("stead --state-dir {} gate", quote(paths.dir())));
                ran.push(run_tool(&["systemctl", "--user", "restart", UNIT], quiet)?);
            }
        }
        Kind::Launchd => {
            let domain = format!("gui/{}", uid());
            let service = format!("{domain}/{LABEL}");
            let loaded = tool_succeeds(&["launchctl", "print", &service]);
            if loaded && replaced {
                if !pass_gate(paths, quiet)? {
                    return Ok(None);
                }
                ran.push(format!("stead --state-dir {} gate", quote(paths.dir())));
                ran.push(run_tool(&["launchctl", "bootout", &service], quiet)?);
            }
            // A loaded agent whose file is unchanged is left as it is: bootstrap would
            // refuse it ("service already loaded").
            if !loaded || replaced {
                ran.push(run_tool(&["launchctl", "bootstrap", &domain, path], quiet)?);
            }
        }
    }
    Ok(Some(ran))
}

/// `uninstall --now`: stops and unloads the service; the commands run. A service that is
/// not loaded is no error.
fn unload(kind: Kind, quiet: bool) -> anyhow::Result<Vec<String>> {
    match kind {
        Kind::Systemd => Ok(vec![run_tool(
            &["systemctl", "--user", "disable", "--now", UNIT],
            quiet,
        )?]),
        Kind::Launchd => {
            let service = format!("gui/{}/{LABEL}", uid());
            if !tool_succeeds(&["launchctl", "print", &service]) {
                return Ok(Vec::new());
            }
            Ok(vec![run_tool(&["launchctl", "bootout", &service], quiet)?])
        }
    }
}

/// Runs a service manager's command; what ran, or why it failed (with what it said).
fn run_tool(argv: &[&str], quiet: bool) -> anyhow::Result<String> {
    let shown = argv.join(" ");
    if !quiet {
        eprintln!("running: {shown}");
    }
    let out = std::process::Command::new(argv[0])
        .args(&argv[1..])
        .stdin(std::process::Stdio::null())
        .output()
        .with_context(|| format!("failed to run {}", argv[0]))?;
    if !out.status.success() {
        bail!(
            "`{shown}` failed ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    Ok(shown)
}

/// Whether a command of the service manager's succeeds (a question, not a step).
fn tool_succeeds(argv: &[&str]) -> bool {
    std::process::Command::new(argv[0])
        .args(&argv[1..])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// `stead gate` for the state directory, by this executable: whether a restart may go
/// ahead now (false: deferred, and the caller stops nothing).
fn pass_gate(paths: &StatePaths, quiet: bool) -> anyhow::Result<bool> {
    let exe = std::env::current_exe().context("failed to find the stead executable")?;
    let mut gate = std::process::Command::new(exe);
    gate.arg("--state-dir").arg(paths.dir()).arg("gate");
    if quiet {
        gate.stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null());
    }
    let status = gate.status().context("failed to run stead gate")?;
    match status.code() {
        Some(exit::SUCCESS) => Ok(true),
        Some(exit::TEMP_FAIL) => {
            eprintln!("the gate deferred the restart: nothing was stopped; try again later");
            Ok(false)
        }
        _ => bail!("stead gate failed ({status})"),
    }
}

/// How long a freshly loaded service may take to serve.
const SERVE_WITHIN: std::time::Duration = std::time::Duration::from_secs(15);

/// Waits until a server serves the state directory (started by the service manager; this
/// never starts one itself); its pid.
fn wait_serving(paths: &StatePaths, quiet: bool) -> anyhow::Result<u32> {
    let started = std::time::Instant::now();
    let mut told = false;
    loop {
        if let stead_client::probe::ProbeOutcome::Serving(hello) =
            stead_client::probe::probe(paths.socket(), std::time::Duration::from_millis(500))
        {
            return Ok(hello.pid);
        }
        let waited = started.elapsed();
        if waited >= SERVE_WITHIN {
            bail!(
                "the service was loaded, but no server serves {} after {}s; see {}",
                paths.dir().display(),
                SERVE_WITHIN.as_secs(),
                paths.logs_dir().display()
            );
        }
        if !quiet && !told && waited >= std::time::Duration::from_secs(1) {
            eprintln!("waiting for the service's server to serve…");
            told = true;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

/// How to restart the installed server later: not a next step, but the one command a
/// reader is likely to get wrong.
fn restart_hint(kind: Kind, dir: &Path) -> String {
    let restart = match kind {
        Kind::Systemd => format!("systemctl --user restart {UNIT}"),
        Kind::Launchd => format!("launchctl kickstart -k gui/{}/{LABEL}", uid()),
    };
    format!(
        "restart it later, after the gate (`stead restart` gates too, but starts the new \
         server outside the service manager):\n  {} && {restart}\n",
        gate(dir)
    )
}

fn gate(dir: &Path) -> String {
    format!("stead --state-dir {} gate", quote(dir))
}

fn render_steps(steps: &[Step]) -> String {
    steps
        .iter()
        .map(|s| format!("{}:\n  {}\n", s.why, s.command))
        .collect()
}

/// A path as it will be written into a unit or plist: UTF-8 (both formats are text) and
/// free of control characters (a newline would end the line or value early).
fn unit_text<'a>(path: &'a Path, what: &str) -> anyhow::Result<&'a str> {
    match path.to_str() {
        Some(s) if !s.chars().any(char::is_control) => Ok(s),
        _ => bail!(
            "{what} {} is not UTF-8 text without control characters; a service file cannot name it",
            path.display()
        ),
    }
}

/// One word of a systemd command line: bare when plain, else double-quoted with
/// backslash escapes. systemd expands `%` specifiers even inside quotes, so `%` is
/// doubled; `$` variables likewise, but only in the arguments (`program: false`): the
/// program's path is taken literally.
fn systemd_word(word: &str, program: bool) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "/._-+,:@=".contains(c);
    if !word.is_empty() && word.chars().all(plain) {
        return word.to_owned();
    }
    let mut out = String::from("\"");
    for c in word.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '%' => out.push_str("%%"),
            '$' if !program => out.push_str("$$"),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn xml_escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// A path quoted for `sh`, for the commands printed to copy.
fn quote(path: &Path) -> String {
    shell_words::quote(&path.to_string_lossy()).into_owned()
}

fn uid() -> u32 {
    rustix::process::getuid().as_raw()
}

fn home() -> anyhow::Result<PathBuf> {
    match std::env::var_os("HOME").map(PathBuf::from) {
        Some(home) if home.is_absolute() => Ok(home),
        _ => bail!("HOME is not set to an absolute path; cannot tell where the file goes"),
    }
}

/// `$XDG_CONFIG_HOME`, else `~/.config`; a relative value is ignored, as the XDG base
/// directory specification asks.
fn config_home() -> anyhow::Result<PathBuf> {
    match std::env::var_os("XDG_CONFIG_HOME").map(PathBuf::from) {
        Some(dir) if dir.is_absolute() => Ok(dir),
        _ => Ok(home()?.join(".config")),
    }
}

fn read_if_present(path: &Path) -> anyhow::Result<Option<Vec<u8>>> {
    match fs::read(path) {
        Ok(bytes) => Ok(Some(bytes)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e).with_context(|| format!("failed to read {}", path.display())),
    }
}

/// Writes `bytes` to `path` whole (the service manager never reads half a file), creating
/// its directory. Mode 0644: launchd refuses an agent others can write.
fn write_file(path: &Path, bytes: &[u8]) -> io::Result<()> {
    fs::create_dir_all(path.parent().unwrap_or(Path::new(".")))?;
    stead_server::system::fsutil::write_atomic(path, bytes, 0o644)
}
