//! `stead install` and `stead uninstall`, run as the real binary with HOME and
//! XDG_CONFIG_HOME pointed at a temporary directory: the files they write, what they
//! refuse to overwrite or remove, and that they never need a server.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

/// A temporary home, config home and state directory for one test.
struct Sandbox {
    tmp: tempfile::TempDir,
}

/// What a command printed and how it exited.
struct Outcome {
    code: i32,
    stdout: String,
    stderr: String,
}

impl Sandbox {
    fn new() -> Self {
        let tmp = tempfile::Builder::new()
            .prefix("stead-install.")
            .tempdir_in("/tmp")
            .expect("temp dir");
        Self { tmp }
    }

    fn home(&self) -> PathBuf {
        self.tmp.path().join("home")
    }

    fn config_home(&self) -> PathBuf {
        self.tmp.path().join("config")
    }

    fn state_dir(&self) -> PathBuf {
        self.tmp.path().join("state")
    }

    fn unit(&self) -> PathBuf {
        self.config_home().join("systemd/user/stead.service")
    }

    fn plist(&self) -> PathBuf {
        self.home().join("Library/LaunchAgents/dev.stead.plist")
    }

    /// `stead --state-dir STATE ARGS` with the sandbox's HOME and XDG_CONFIG_HOME.
    fn stead(&self, args: &[&str]) -> Outcome {
        self.stead_in(&self.state_dir(), args)
    }

    fn stead_in(&self, state_dir: &Path, args: &[&str]) -> Outcome {
        let mut command = Command::new(env!("CARGO_BIN_EXE_stead"));
        command
            .arg("--state-dir")
            .arg(state_dir)
            .args(args)
            .env("HOME", self.home())
            .env("XDG_CONFIG_HOME", self.config_home())
            .env_remove("STEAD_STATE_DIR");
        run(&mut command)
    }
}

fn run(command: &mut Command) -> Outcome {
    let out = command.output().expect("stead runs");
    Outcome {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

impl Outcome {
    #[track_caller]
    fn ok(self) -> Self {
        assert_eq!(
            self.code, 0,
            "stdout:\n{}\nstderr:\n{}",
            self.stdout, self.stderr
        );
        self
    }

    #[track_caller]
    fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.stdout).unwrap_or_else(|e| panic!("{e}: {}", self.stdout))
    }
}

fn exe() -> String {
    fs::canonicalize(env!("CARGO_BIN_EXE_stead"))
        .unwrap()
        .to_string_lossy()
        .into_owned()
}

fn canonical(dir: &Path) -> String {
    fs::canonicalize(dir)
        .unwrap()
        .to_string_lossy()
        .into_owned()
}

fn mode(path: &Path) -> u32 {
    fs::metadata(path).unwrap().permissions().mode() & 0o777
}

#[test]
fn systemd_unit_runs_this_binary_and_stops_only_the_server() {
    let sb = Sandbox::new();
    let out = sb.stead(&["install", "--systemd"]).ok();
    assert!(out.stdout.contains("wrote "), "{}", out.stdout);
    assert!(
        out.stdout.contains(
            "systemctl --user daemon-reload && systemctl --user enable --now stead.service"
        ),
        "{}",
        out.stdout
    );
    assert!(out.stdout.contains("systemctl --user status stead"));

    let unit = fs::read_to_string(sb.unit()).expect("the unit is written");
    let exec = format!(
        "ExecStart={} --state-dir {} serve\n",
        exe(),
        canonical(&sb.state_dir())
    );
    assert!(unit.contains(&exec), "{unit}");
    for line in [
        "# Installed by stead install",
        "\nKillMode=process\n",
        "\nRestart=on-failure\n",
        "\nStandardOutput=journal\n",
        "\nStandardError=journal\n",
        "\nWantedBy=default.target\n",
    ] {
        assert!(unit.contains(line), "{line:?} missing from:\n{unit}");
    }
    assert_eq!(mode(&sb.unit()), 0o644);
    // Resolving the state directory must not start a server.
    assert!(!sb.state_dir().join("stead.db").exists());
    assert!(!sb.state_dir().join("server.lock.json").exists());

    let again = sb.stead(&["install", "--systemd"]).ok();
    assert!(
        again.stdout.contains("already installed"),
        "{}",
        again.stdout
    );
    let json = sb.stead(&["install", "--systemd", "--json"]).ok().json();
    assert_eq!(json["path"], sb.unit().to_string_lossy().as_ref());
    assert_eq!(json["written"], false);
    assert_eq!(json["already"], true);
    assert_eq!(
        json["next"][0],
        "systemctl --user daemon-reload && systemctl --user enable --now stead.service"
    );
    assert_eq!(fs::read_to_string(sb.unit()).unwrap(), unit);
}

#[test]
fn systemd_refuses_a_different_unit_without_force() {
    let sb = Sandbox::new();
    fs::create_dir_all(sb.unit().parent().unwrap()).unwrap();
    let foreign = "[Service]\nExecStart=/usr/bin/true\n";
    fs::write(sb.unit(), foreign).unwrap();
    let out = sb.stead(&["install", "--systemd"]);
    assert_eq!(out.code, 1, "{}", out.stdout);
    assert!(
        out.stderr.contains("not written by stead install"),
        "{}",
        out.stderr
    );
    assert_eq!(fs::read_to_string(sb.unit()).unwrap(), foreign);

    let json = sb
        .stead(&["install", "--systemd", "--force", "--json"])
        .ok()
        .json();
    assert_eq!(json["written"], true);
    assert_eq!(json["already"], false);
    assert!(
        fs::read_to_string(sb.unit())
            .unwrap()
            .contains("KillMode=process")
    );

    // Ours, but for another state directory: still a different unit.
    let other = sb.tmp.path().join("other");
    let out = sb.stead_in(&other, &["install", "--systemd"]);
    assert_eq!(out.code, 1, "{}", out.stdout);
    assert!(out.stderr.contains("--force"), "{}", out.stderr);
    let unit = fs::read_to_string(sb.unit()).unwrap();
    assert!(unit.contains(&canonical(&sb.state_dir())), "{unit}");
    let out = sb
        .stead_in(&other, &["install", "--systemd", "--force"])
        .ok();
    assert!(out.stdout.contains("replaced"), "{}", out.stdout);
    let unit = fs::read_to_string(sb.unit()).unwrap();
    assert!(unit.contains(&canonical(&other)), "{unit}");
}

#[test]
fn print_writes_nothing() {
    let sb = Sandbox::new();
    let unit = sb.stead(&["install", "--systemd", "--print"]).ok().stdout;
    assert!(unit.starts_with("# Installed by stead install"), "{unit}");
    assert!(unit.contains("KillMode=process"));
    let plist = sb.stead(&["install", "--launchd", "--print"]).ok().stdout;
    assert!(plist.contains("<key>AbandonProcessGroup</key>"), "{plist}");
    assert!(!sb.config_home().exists());
    assert!(!sb.home().exists());
}

#[test]
fn exactly_one_service_manager_is_named() {
    let sb = Sandbox::new();
    for args in [
        &["install"][..],
        &["install", "--systemd", "--launchd"],
        &["uninstall"],
        &["uninstall", "--systemd", "--launchd"],
    ] {
        let out = sb.stead(args);
        assert_eq!(out.code, 2, "{args:?}: {}", out.stderr);
    }
}

#[test]
fn config_home_defaults_to_dot_config() {
    let sb = Sandbox::new();
    let mut command = Command::new(env!("CARGO_BIN_EXE_stead"));
    command
        .arg("--state-dir")
        .arg(sb.state_dir())
        .args(["install", "--systemd", "--json"])
        .env("HOME", sb.home())
        .env_remove("XDG_CONFIG_HOME")
        .env_remove("STEAD_STATE_DIR");
    let json = run(&mut command).ok().json();
    let expected = sb.home().join(".config/systemd/user/stead.service");
    assert_eq!(json["path"], expected.to_string_lossy().as_ref());
    assert!(expected.is_file());
}

#[test]
fn paths_with_spaces_and_specials_are_quoted_for_systemd() {
    let sb = Sandbox::new();
    let odd = sb.tmp.path().join("my state %i $HOME");
    let unit = sb
        .stead_in(&odd, &["install", "--systemd", "--print"])
        .ok()
        .stdout;
    let dir = canonical(&odd).replace('%', "%%").replace('$', "$$");
    let exec = format!("ExecStart={} --state-dir \"{dir}\" serve\n", exe());
    assert!(unit.contains(&exec), "{unit}");
}

#[test]
fn systemd_uninstall_removes_only_our_unit_once_disabled() {
    let sb = Sandbox::new();
    let out = sb.stead(&["uninstall", "--systemd"]).ok();
    assert!(out.stdout.contains("not installed"), "{}", out.stdout);
    let json = sb.stead(&["uninstall", "--systemd", "--json"]).ok().json();
    assert_eq!(json["removed"], false);
    assert_eq!(json["already"], true);

    sb.stead(&["install", "--systemd"]).ok();
    // Enabled: `systemctl disable` needs the unit file, so it must come first.
    let wants = sb.unit().with_file_name("default.target.wants");
    fs::create_dir_all(&wants).unwrap();
    std::os::unix::fs::symlink(sb.unit(), wants.join("stead.service")).unwrap();
    let out = sb.stead(&["uninstall", "--systemd"]);
    assert_eq!(out.code, 1, "{}", out.stdout);
    assert!(
        out.stderr
            .contains("systemctl --user disable --now stead.service"),
        "{}",
        out.stderr
    );
    assert!(sb.unit().is_file());

    fs::remove_file(wants.join("stead.service")).unwrap();
    let json = sb.stead(&["uninstall", "--systemd", "--json"]).ok().json();
    assert_eq!(json["removed"], true);
    assert_eq!(json["next"][0], "systemctl --user daemon-reload");
    assert!(!sb.unit().exists());

    fs::write(sb.unit(), "[Service]\nExecStart=/usr/bin/true\n").unwrap();
    let out = sb.stead(&["uninstall", "--systemd"]);
    assert_eq!(out.code, 1, "{}", out.stdout);
    assert!(
        out.stderr.contains("not written by stead install"),
        "{}",
        out.stderr
    );
    assert!(sb.unit().is_file());
}

#[test]
fn launchd_agent_runs_this_binary_and_abandons_its_process_group() {
    let sb = Sandbox::new();
    let out = sb.stead(&["install", "--launchd"]).ok();
    let path = sb.plist();
    assert!(
        out.stdout.contains(&format!(
            "launchctl bootstrap gui/{} {}",
            uid(),
            path.display()
        )),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout
            .contains(&format!("launchctl kickstart -k gui/{}/dev.stead", uid())),
        "{}",
        out.stdout
    );
    assert!(out.stdout.contains("stead restart"), "{}", out.stdout);

    let plist = fs::read_to_string(&path).expect("the plist is written");
    assert_well_formed(&plist);
    assert_eq!(mode(&path), 0o644);
    let dict = squeeze(&plist);
    let state = canonical(&sb.state_dir());
    for pair in [
        "<key>Label</key><string>dev.stead</string>".to_owned(),
        format!(
            "<key>ProgramArguments</key><array><string>{}</string><string>--state-dir</string><string>{state}</string><string>serve</string></array>",
            exe()
        ),
        "<key>RunAtLoad</key><true/>".to_owned(),
        "<key>KeepAlive</key><dict><key>SuccessfulExit</key><false/></dict>".to_owned(),
        "<key>AbandonProcessGroup</key><true/>".to_owned(),
        format!("<key>StandardOutPath</key><string>{state}/logs/launchd.log</string>"),
        format!("<key>StandardErrorPath</key><string>{state}/logs/launchd.log</string>"),
    ] {
        assert!(dict.contains(&pair), "{pair} missing from:\n{plist}");
    }
    // launchd opens the log before any server could create its directory.
    assert!(sb.state_dir().join("logs").is_dir());
    assert!(!sb.state_dir().join("stead.db").exists());

    let again = sb.stead(&["install", "--launchd", "--json"]).ok().json();
    assert_eq!(again["already"], true);
    assert_eq!(again["written"], false);
    assert_eq!(again["path"], path.to_string_lossy().as_ref());
}

#[test]
fn launchd_refuses_a_different_agent_and_removes_only_its_own() {
    let sb = Sandbox::new();
    let path = sb.plist();
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    let foreign = "<?xml version=\"1.0\"?>\n<plist version=\"1.0\"><dict/></plist>\n";
    fs::write(&path, foreign).unwrap();
    let out = sb.stead(&["install", "--launchd"]);
    assert_eq!(out.code, 1, "{}", out.stdout);
    assert!(
        out.stderr.contains("not written by stead install"),
        "{}",
        out.stderr
    );
    let out = sb.stead(&["uninstall", "--launchd"]);
    assert_eq!(out.code, 1, "{}", out.stdout);
    assert_eq!(fs::read_to_string(&path).unwrap(), foreign);

    sb.stead(&["install", "--launchd", "--force"]).ok();
    assert!(fs::read_to_string(&path).unwrap().contains("dev.stead"));
    let json = sb.stead(&["uninstall", "--launchd", "--json"]).ok().json();
    assert_eq!(json["removed"], true);
    assert_eq!(
        json["next"][0],
        format!("launchctl bootout gui/{}/dev.stead", uid())
    );
    assert!(!path.exists());
    let out = sb.stead(&["uninstall", "--launchd"]).ok();
    assert!(out.stdout.contains("not installed"), "{}", out.stdout);
}

#[test]
fn launchd_escapes_paths_as_xml() {
    let sb = Sandbox::new();
    let odd = sb.tmp.path().join("a&b <c>");
    let plist = sb
        .stead_in(&odd, &["install", "--launchd", "--print"])
        .ok()
        .stdout;
    assert_well_formed(&plist);
    let escaped = canonical(&odd)
        .replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;");
    assert!(
        plist.contains(&format!("<string>{escaped}</string>")),
        "{plist}"
    );
}

fn uid() -> u32 {
    rustix::process::getuid().as_raw()
}

/// The plist with the whitespace between elements and the comments taken out, so
/// key-value pairs can be matched as one string.
fn squeeze(xml: &str) -> String {
    let mut out = String::new();
    let mut rest = xml;
    while let Some(start) = rest.find("<!--") {
        out.push_str(&rest[..start]);
        let end = rest[start..].find("-->").expect("comment closes") + start + 3;
        rest = &rest[end..];
    }
    out.push_str(rest);
    out.lines().map(str::trim).collect()
}

/// Enough of XML well-formedness to catch a broken plist without an XML parser: tags
/// nest and close, comments hold no `--`, and text has no raw `<` or stray `&`.
#[track_caller]
fn assert_well_formed(xml: &str) {
    let mut open: Vec<&str> = Vec::new();
    let mut rest = xml;
    let mut roots = 0;
    while let Some(lt) = rest.find('<') {
        check_text(&rest[..lt], xml);
        rest = &rest[lt..];
        if let Some(body) = rest.strip_prefix("<!--") {
            let end = body.find("-->").expect("comment closes");
            assert!(!body[..end].contains("--"), "`--` in a comment:\n{xml}");
            rest = &body[end + 3..];
            continue;
        }
        let gt = rest.find('>').expect("tag closes");
        let tag = &rest[1..gt];
        rest = &rest[gt + 1..];
        if tag.starts_with('?') || tag.starts_with("!DOCTYPE") {
            assert!(open.is_empty(), "prolog inside an element:\n{xml}");
            continue;
        }
        if let Some(name) = tag.strip_prefix('/') {
            assert_eq!(open.pop(), Some(name), "mismatched </{name}>:\n{xml}");
            continue;
        }
        if open.is_empty() {
            roots += 1;
        }
        if !tag.ends_with('/') {
            open.push(tag.split_whitespace().next().expect("tag name"));
        }
    }
    check_text(rest, xml);
    assert!(open.is_empty(), "unclosed {open:?}:\n{xml}");
    assert_eq!(roots, 1, "one root element:\n{xml}");
    assert!(xml.contains("<plist version=\"1.0\">"), "{xml}");
}

#[track_caller]
fn check_text(text: &str, xml: &str) {
    let mut rest = text;
    while let Some(amp) = rest.find('&') {
        rest = &rest[amp..];
        let ok = ["&amp;", "&lt;", "&gt;", "&quot;", "&apos;"]
            .iter()
            .any(|e| rest.starts_with(e));
        assert!(ok, "a stray & in text:\n{xml}");
        rest = &rest[1..];
    }
    assert!(!text.contains('>'), "a raw > in text:\n{xml}");
}

/// A stand-in for `launchctl` or `systemctl` on the sandbox's PATH: it records each
/// call (one line of arguments) and plays the service manager's part with the real
/// server: loading starts `stead serve` for the sandbox's state directory (detached, its
/// output nowhere), unloading stops it. What it was asked is what is checked.
struct Manager<'a> {
    sb: &'a Sandbox,
    bin: PathBuf,
}

impl<'a> Manager<'a> {
    fn new(sb: &'a Sandbox, tool: &str) -> Self {
        let bin = sb.tmp.path().join("bin");
        fs::create_dir_all(&bin).unwrap();
        let serve = format!(
            "'{}' --state-dir '{}' serve </dev/null >/dev/null 2>&1 &",
            env!("CARGO_BIN_EXE_stead"),
            sb.state_dir().display()
        );
        let stop = format!(
            "'{}' --state-dir '{}' stop >/dev/null 2>&1",
            env!("CARGO_BIN_EXE_stead"),
            sb.state_dir().display()
        );
        let loaded = sb.tmp.path().join("loaded");
        let script = match tool {
            "launchctl" => format!(
                "case \"$1\" in\n\
                 print) [ -e '{loaded}' ] ;;\n\
                 bootstrap) [ -e '{loaded}' ] && {{ echo 'service already loaded' >&2; exit 5; }}\n\
                 touch '{loaded}'; {serve} ;;\n\
                 bootout) [ -e '{loaded}' ] || exit 3; rm '{loaded}'; {stop} ;;\n\
                 *) exit 64 ;;\n\
                 esac",
                loaded = loaded.display()
            ),
            "systemctl" => format!(
                "case \"$2 $3\" in\n\
                 'enable --now') [ -e '{loaded}' ] || {{ touch '{loaded}'; {serve} }} ;;\n\
                 'disable --now') [ -e '{loaded}' ] && {{ rm '{loaded}'; {stop}; }}; true ;;\n\
                 'daemon-reload '|'restart stead.service') ;;\n\
                 *) exit 64 ;;\n\
                 esac",
                loaded = loaded.display()
            ),
            other => panic!("no stand-in for {other}"),
        };
        let path = bin.join(tool);
        let log = sb.tmp.path().join("calls");
        fs::write(
            &path,
            format!(
                "#!/bin/sh\necho \"{tool} $*\" >> '{}'\n{script}\n",
                log.display()
            ),
        )
        .unwrap();
        fs::set_permissions(&path, fs::Permissions::from_mode(0o755)).unwrap();
        Self { sb, bin }
    }

    /// `stead --state-dir STATE ARGS` with the stand-in first on PATH.
    fn stead(&self, args: &[&str]) -> Outcome {
        let path = format!(
            "{}:{}",
            self.bin.display(),
            std::env::var("PATH").unwrap_or_default()
        );
        let mut command = Command::new(env!("CARGO_BIN_EXE_stead"));
        command
            .arg("--state-dir")
            .arg(self.sb.state_dir())
            .args(args)
            .env("HOME", self.sb.home())
            .env("XDG_CONFIG_HOME", self.sb.config_home())
            .env("PATH", path)
            .env_remove("STEAD_STATE_DIR");
        run(&mut command)
    }

    /// The calls recorded so far, and forgotten.
    fn calls(&self) -> Vec<String> {
        let log = self.sb.tmp.path().join("calls");
        let calls = fs::read_to_string(&log).unwrap_or_default();
        let _ = fs::remove_file(&log);
        calls.lines().map(str::to_owned).collect()
    }

    /// Whether a server serves the state directory, asked without starting one.
    fn serving(&self) -> Option<u64> {
        let socket = self.sb.state_dir().join("stead.sock");
        let stream = std::os::unix::net::UnixStream::connect(socket).ok()?;
        stream
            .set_read_timeout(Some(std::time::Duration::from_secs(2)))
            .ok()?;
        let mut hello = String::new();
        std::io::BufRead::read_line(&mut std::io::BufReader::new(stream), &mut hello).ok()?;
        let hello: serde_json::Value = serde_json::from_str(&hello).ok()?;
        hello["hello"]["pid"].as_u64()
    }
}

impl Drop for Manager<'_> {
    /// Whatever the test left running is stopped, also when it failed.
    fn drop(&mut self) {
        let _ = Command::new(env!("CARGO_BIN_EXE_stead"))
            .arg("--state-dir")
            .arg(self.sb.state_dir())
            .args(["stop"])
            .env_remove("STEAD_STATE_DIR")
            .output();
    }
}

#[test]
fn launchd_install_now_bootstraps_the_agent_and_waits_for_its_server() {
    let sb = Sandbox::new();
    let launchctl = Manager::new(&sb, "launchctl");
    let service = format!("gui/{}/dev.stead", uid());
    let json = launchctl
        .stead(&["install", "--launchd", "--now", "--json"])
        .ok()
        .json();
    let bootstrap = format!("launchctl bootstrap gui/{} {}", uid(), sb.plist().display());
    assert_eq!(
        launchctl.calls(),
        [format!("launchctl print {service}"), bootstrap.clone()]
    );
    assert_eq!(json["ran"][0], bootstrap.as_str());
    assert_eq!(json["next"], serde_json::json!([]));
    let pid = json["server_pid"].as_u64().expect("the server's pid");
    assert_eq!(launchctl.serving(), Some(pid), "its server serves");

    // Loaded already, with the same file: left alone (bootstrap would refuse it).
    let again = launchctl
        .stead(&["install", "--launchd", "--now", "--json"])
        .ok()
        .json();
    assert_eq!(again["already"], true);
    assert_eq!(again["ran"], serde_json::json!([]));
    assert_eq!(launchctl.calls(), [format!("launchctl print {service}")]);
    assert_eq!(again["server_pid"].as_u64(), Some(pid));

    // Uninstalled now: booted out (its server stops), then the file goes.
    let gone = launchctl
        .stead(&["uninstall", "--launchd", "--now", "--json"])
        .ok()
        .json();
    assert_eq!(
        launchctl.calls(),
        [
            format!("launchctl print {service}"),
            format!("launchctl bootout {service}")
        ]
    );
    assert_eq!(gone["removed"], true);
    assert_eq!(gone["next"], serde_json::json!([]));
    assert!(!sb.plist().exists());
    assert_eq!(launchctl.serving(), None, "its server stopped");
}

#[test]
fn launchd_install_now_replacing_a_loaded_agent_passes_the_gate_then_reloads() {
    let sb = Sandbox::new();
    let launchctl = Manager::new(&sb, "launchctl");
    let service = format!("gui/{}/dev.stead", uid());
    launchctl.stead(&["install", "--launchd", "--now"]).ok();
    launchctl.calls();
    // The agent's file changes (another copy of the same agent, edited by hand).
    let plist = fs::read_to_string(sb.plist()).unwrap();
    fs::write(sb.plist(), plist.replace("<true/>", "<true/> ")).unwrap();
    let json = launchctl
        .stead(&["install", "--launchd", "--now", "--force", "--json"])
        .ok()
        .json();
    let bootstrap = format!("launchctl bootstrap gui/{} {}", uid(), sb.plist().display());
    assert_eq!(
        launchctl.calls(),
        [
            format!("launchctl print {service}"),
            format!("launchctl bootout {service}"),
            bootstrap.clone(),
        ]
    );
    // The gate came first: nothing was due, so it let the restart through.
    let gate = format!("stead --state-dir {} gate", canonical(&sb.state_dir()));
    let booted_out = format!("launchctl bootout {service}");
    assert_eq!(
        json["ran"],
        serde_json::json!([gate, booted_out, bootstrap])
    );
    assert_eq!(launchctl.serving(), json["server_pid"].as_u64());
}

#[test]
fn systemd_install_now_enables_the_unit_and_uninstall_now_disables_it_first() {
    let sb = Sandbox::new();
    let systemctl = Manager::new(&sb, "systemctl");
    let out = systemctl.stead(&["install", "--systemd", "--now"]).ok();
    assert!(out.stdout.contains("loaded; its server"), "{}", out.stdout);
    assert!(
        out.stderr
            .contains("running: systemctl --user enable --now"),
        "{}",
        out.stderr
    );
    assert_eq!(
        systemctl.calls(),
        [
            "systemctl --user daemon-reload",
            "systemctl --user enable --now stead.service"
        ]
    );
    assert!(systemctl.serving().is_some());
    let json = systemctl
        .stead(&["uninstall", "--systemd", "--now", "--json"])
        .ok()
        .json();
    assert_eq!(
        systemctl.calls(),
        [
            "systemctl --user disable --now stead.service",
            "systemctl --user daemon-reload"
        ]
    );
    assert_eq!(json["ran"].as_array().map(Vec::len), Some(2));
    assert!(!sb.unit().exists());
    assert_eq!(systemctl.serving(), None, "its server stopped");
}

#[test]
fn a_service_manager_that_fails_is_reported_with_what_it_said() {
    let sb = Sandbox::new();
    let launchctl = Manager::new(&sb, "launchctl");
    // launchd has the agent already, but `print` does not show it: bootstrap refuses.
    fs::write(sb.tmp.path().join("loaded"), "").unwrap();
    let tool = sb.tmp.path().join("bin/launchctl");
    let script = fs::read_to_string(&tool).unwrap();
    fs::write(&tool, script.replace("print) [ -e", "print) false && [ -e")).unwrap();
    let out = launchctl.stead(&["install", "--launchd", "--now"]);
    assert_eq!(out.code, 1, "{}", out.stdout);
    let bootstrap = format!(
        "`launchctl bootstrap gui/{} {}` failed",
        uid(),
        sb.plist().display()
    );
    assert!(
        out.stderr.contains(&bootstrap) && out.stderr.contains("service already loaded"),
        "{}",
        out.stderr
    );
    // The file is written all the same: loading it can be tried again.
    assert!(sb.plist().is_file());
    assert_eq!(launchctl.serving(), None);
}
