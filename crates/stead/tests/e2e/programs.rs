//! The two programs: `stead`, the client, links none of the server, and hands the
//! daemon's commands to `steadd` in the same process; `steadd` runs the server; a
//! `stead` without its `steadd` says so at once, and its guard still refuses.

use super::harness::{ChildGuard, StateDir, wait_until, within_patience};
use std::path::Path;
use std::process::{Command, Stdio};

const CLIENT: &str = env!("CARGO_BIN_EXE_stead");
const DAEMON: &str = env!("CARGO_BIN_EXE_steadd");

/// The functions a program defines, by name as binutils' `nm` demangles them, without
/// the generic arguments: `crate::module::item`, or `<crate::Type as Trait>::item`.
fn functions(program: &str) -> Vec<String> {
    let out = Command::new("nm")
        .args(["--defined-only", "--demangle"])
        .arg(program)
        .output()
        .expect("nm runs (binutils)");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|line| {
            let mut fields = line.splitn(3, ' ');
            let (_, kind, name) = (fields.next()?, fields.next()?, fields.next()?);
            ["t", "T", "w", "W"]
                .contains(&kind)
                .then(|| name.trim_start_matches('<').to_string())
        })
        .collect()
}

/// Whether any of `functions` is an item of the crate or module `path` (its own code,
/// not a generic of another crate's that it instantiated).
fn defines(functions: &[String], path: &str) -> bool {
    functions.iter().any(|f| f.starts_with(path))
}

#[test]
fn the_client_links_none_of_the_server_ledger_guard_or_mcp() {
    let client = functions(CLIENT);
    let daemon = functions(DAEMON);
    // What only the daemon needs: SQLite's C library, the PostgreSQL driver, the async
    // runtime, the guard's shell parser, the MCP SDK, the server's start, the ledger,
    // the guard, the monitor. (`stead install` shares one file helper of the server
    // crate: that much of it may be linked.)
    for path in [
        "sqlite3_open_v2",
        "tokio_postgres::",
        "tokio::",
        "brush_parser::",
        "rmcp::",
        "stead_server::startup::",
        "stead_store::",
        "stead_guard::",
        "stead_monitor::",
    ] {
        assert!(defines(&daemon, path), "steadd should define {path}");
        assert!(!defines(&client, path), "stead links {path}");
    }
}

#[test]
fn stead_serve_becomes_steadd_in_the_same_process() {
    let dir = StateDir::new();
    let server = ChildGuard(
        dir.stead(&["serve"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("stead serve starts"),
    );
    let pid = server.0.id();
    wait_until("the server listens", || {
        std::os::unix::net::UnixStream::connect(dir.path().join("stead.sock")).is_ok()
    });
    let status = dir.status();
    assert_eq!(
        status["pid"], pid,
        "the server is the process `stead serve` started"
    );
    let exe = std::fs::read_link(format!("/proc/{pid}/exe")).unwrap();
    assert_eq!(exe, Path::new(DAEMON).canonicalize().unwrap());
    // argv[0] is kept: `ps` and `pkill -f` still read `stead ... serve`.
    let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap();
    let arg0 = cmdline.split(|&b| b == 0).next().unwrap();
    assert_eq!(arg0, CLIENT.as_bytes());
    assert!(dir.run(&["stop"]).status.success());
}

#[test]
fn steadd_refuses_the_clients_commands() {
    let dir = StateDir::new();
    let out = dir.program(DAEMON).arg("status").output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(said.contains("run this command with stead"), "{said}");
    assert!(
        !dir.path().join("stead.sock").exists(),
        "nothing was started"
    );
}

#[test]
fn a_client_without_its_daemon_says_so_at_once_and_its_guard_refuses() {
    let dir = StateDir::new();
    let lonely = tempfile::tempdir().unwrap();
    let client = lonely.path().join("stead");
    std::fs::copy(CLIENT, &client).unwrap();
    let client = client.to_str().unwrap();

    // A start timeout far beyond the test's patience: an answer within it proves the
    // client did not wait for a server that cannot start.
    let mut status = dir.program(client);
    status
        .env("STEAD_START_TIMEOUT_MS", "600000")
        .arg("--state-dir")
        .arg(dir.path())
        .arg("status");
    let out = within_patience(status);
    assert_eq!(
        out.status.code(),
        Some(69),
        "answered within the test's patience"
    );
    let said = String::from_utf8_lossy(&out.stderr);
    let missing = lonely.path().join("steadd");
    assert!(
        said.contains(&format!(
            "the daemon program {} is missing",
            missing.display()
        )),
        "{said}"
    );

    // A server already serving is reached without it; a restart of stead, which would
    // need it to start the next server, is refused before it stops this one.
    let pid = dir.status()["pid"].clone();
    let status = dir
        .program(client)
        .arg("--state-dir")
        .arg(dir.path())
        .args(["status", "--json"])
        .output()
        .unwrap();
    assert!(
        status.status.success(),
        "{}",
        String::from_utf8_lossy(&status.stderr)
    );
    let restart = dir
        .program(client)
        .arg("--state-dir")
        .arg(dir.path())
        .arg("restart")
        .output()
        .unwrap();
    assert_eq!(restart.status.code(), Some(69));
    assert!(String::from_utf8_lossy(&restart.stderr).contains("is missing"));
    assert_eq!(dir.status()["pid"], pid, "the server still serves");
    assert!(dir.run(&["stop"]).status.success());

    for args in [&["guard", "--", "ls"][..], &["guard", "--hook"]] {
        let out = dir.program(client).args(args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?} must refuse");
        assert!(String::from_utf8_lossy(&out.stderr).contains("is missing"));
    }
}
