//! The server lifecycle end to end: sleep, crash, frozen shutdown, races, supersession,
//! stop, long paths.

use std::os::unix::fs::PermissionsExt;
use std::process::Stdio;
use std::time::{Duration, Instant};

use stead_client::Connection;

use crate::harness::*;

#[test]
fn status_starts_a_server_and_reports_every_field() {
    let dir = StateDir::new();
    let status = dir.status();
    for field in [
        "server_id",
        "pid",
        "epoch",
        "version",
        "started_at",
        "lease_expires_at",
        "state_dir",
        "socket",
    ] {
        assert!(status.get(field).is_some(), "missing {field} in {status}");
    }
    assert_eq!(status["state_dir"], dir.path().to_string_lossy().as_ref());
    assert_eq!(status["epoch"], 1);
    // A second call is answered by the same server.
    assert_eq!(dir.status()["server_id"], status["server_id"]);
    assert_eq!(
        dir.server_pids(),
        vec![status["pid"].as_u64().unwrap() as u32]
    );

    let meta = std::fs::metadata(dir.path()).unwrap();
    assert_eq!(meta.permissions().mode() & 0o777, 0o700);
    let socket = std::fs::metadata(status["socket"].as_str().unwrap()).unwrap();
    assert_eq!(socket.permissions().mode() & 0o777, 0o600);
}

#[test]
fn sleep_past_the_lease_keeps_the_same_server() {
    let dir = StateDir::new();
    let before = dir.status();
    let pid = before["pid"].as_u64().unwrap() as u32;

    signal(pid, libc::SIGSTOP);
    wait_until("the frozen server's lease has expired", || {
        lease_expiry_ms(&dir) < now_ms() - 200
    });
    signal(pid, libc::SIGCONT);

    let after = dir.status();
    assert_eq!(after["server_id"], before["server_id"]);
    assert_eq!(after["pid"], before["pid"]);
    assert_eq!(after["epoch"], before["epoch"]);
    assert!(
        ms_of(after["lease_expires_at"].as_str().unwrap()) > now_ms(),
        "the lease was not re-armed: {after}"
    );
    // And it keeps serving through later heartbeats.
    let armed = lease_expiry_ms(&dir);
    wait_until("two more renewals", || {
        lease_expiry_ms(&dir) >= armed + 2 * HEARTBEAT_MS as i64
    });
    assert_eq!(dir.status()["server_id"], before["server_id"]);
    let log = dir.log();
    assert!(log.contains("re-armed our own expired lease"), "{log}");
    assert!(!log.contains("superseded"), "{log}");
}

#[test]
fn a_crashed_server_is_replaced_at_once() {
    let mut dir = StateDir::new();
    // A long lease: waiting it out would take far longer than the bound below.
    dir.set_env("STEAD_LEASE_MS", "15000");
    dir.set_env("STEAD_HEARTBEAT_MS", "5000");
    let before = dir.status();
    let pid = before["pid"].as_u64().unwrap() as u32;
    signal(pid, libc::SIGKILL);
    wait_until("the server is dead", || !is_alive(pid));

    let started = Instant::now();
    let after = dir.status();
    let took = started.elapsed();
    assert_ne!(after["server_id"], before["server_id"]);
    assert_ne!(after["pid"], before["pid"]);
    assert_eq!(after["epoch"], before["epoch"].as_i64().unwrap() + 1);
    assert!(took < Duration::from_secs(1), "recovery took {took:?}");
    assert!(
        dir.log()
            .contains("took over the unexpired lease of a server that died")
    );
}

#[test]
fn a_holder_frozen_mid_shutdown_blocks_no_successor() {
    let mut dir = StateDir::new();
    dir.set_env("STEAD_LEASE_MS", "15000");
    dir.set_env("STEAD_HEARTBEAT_MS", "5000");
    let before = dir.status();
    let old_pid = before["pid"].as_u64().unwrap() as u32;

    // Ask it to stop, and freeze it the instant it answers: it is now mid-shutdown.
    let socket = before["socket"].as_str().unwrap();
    let mut conn = Connection::open(socket.as_ref(), Duration::from_secs(5)).unwrap();
    conn.stop(Default::default()).unwrap();
    signal(old_pid, libc::SIGSTOP);

    let started = Instant::now();
    let after = dir.status();
    let took = started.elapsed();
    signal(old_pid, libc::SIGCONT);
    assert_ne!(after["server_id"], before["server_id"]);
    assert!(
        took < Duration::from_secs(1),
        "the successor waited {took:?}"
    );

    // The old process finishes its drain and exits without touching the successor.
    wait_until("the old server exits", || !is_alive(old_pid));
    let now = dir.status();
    assert_eq!(now["server_id"], after["server_id"]);
}

#[test]
fn a_holder_frozen_after_sigterm_blocks_no_successor() {
    let mut dir = StateDir::new();
    dir.set_env("STEAD_LEASE_MS", "15000");
    dir.set_env("STEAD_HEARTBEAT_MS", "5000");
    let before = dir.status();
    let old_pid = before["pid"].as_u64().unwrap() as u32;
    // Freeze it mid-shutdown, once it says everything is released.
    signal(old_pid, libc::SIGTERM);
    wait_until("the server has released everything", || {
        dir.log()
            .contains("released the socket, lease and lock file")
    });
    signal(old_pid, libc::SIGSTOP);
    let started = Instant::now();
    let after = dir.status();
    let took = started.elapsed();
    signal(old_pid, libc::SIGCONT);
    assert_ne!(after["server_id"], before["server_id"]);
    assert!(
        took < Duration::from_secs(1),
        "the successor waited {took:?}"
    );
}

#[test]
fn twenty_clients_racing_on_an_empty_directory_share_one_server() {
    let dir = StateDir::new();
    let children: Vec<_> = (0..20)
        .map(|_| {
            dir.stead(&["status", "--json"])
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    let outputs: Vec<_> = children
        .into_iter()
        .map(|c| c.wait_with_output().unwrap())
        .collect();
    let mut ids = std::collections::BTreeSet::new();
    for out in &outputs {
        let stdout = text(&out.stdout);
        let stderr = text(&out.stderr);
        assert!(out.status.success(), "a client failed: {stderr}");
        assert!(
            !stdout.contains("already") && !stderr.contains("already"),
            "{stdout}{stderr}"
        );
        let status: serde_json::Value = serde_json::from_str(&stdout).unwrap();
        ids.insert(status["server_id"].as_str().unwrap().to_string());
    }
    assert_eq!(ids.len(), 1, "clients saw several servers: {ids:?}");
    wait_until("losing starters have exited", || {
        dir.server_pids().len() == 1
    });
    assert!(!dir.log().contains("already serving"));
}

#[test]
fn a_superseded_server_stops_without_touching_its_successor() {
    let dir = StateDir::new();
    let before = dir.status();
    let old_pid = before["pid"].as_u64().unwrap() as u32;

    // Frozen past its lease while a client needs a server: a successor takes over.
    signal(old_pid, libc::SIGSTOP);
    wait_until("the frozen server's lease has expired", || {
        lease_expiry_ms(&dir) < now_ms()
    });
    let after = dir.status();
    assert_ne!(after["server_id"], before["server_id"]);
    assert_eq!(after["epoch"], before["epoch"].as_i64().unwrap() + 1);

    // Thawed, the old server finds its claim superseded and stops.
    signal(old_pid, libc::SIGCONT);
    wait_until("the superseded server exits", || !is_alive(old_pid));
    let log = dir.log();
    assert!(log.contains("claim superseded"), "{log}");
    assert!(log.contains(after["server_id"].as_str().unwrap()), "{log}");

    // The successor's socket and lock file are intact.
    let now = dir.status();
    assert_eq!(now["server_id"], after["server_id"]);
    let lock: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("server.lock.json")).unwrap())
            .unwrap();
    assert_eq!(lock["server_id"], after["server_id"]);
    assert_eq!(lock["schema"], "stead.server-lock.v1");
}

/// A run's command stops the server it runs under and starts another (`stead status`),
/// which then starts a run of another job. That server is the user's, not the run's: it
/// outlives the run, with the run it started (both were below the run's monitor, whose
/// sweep of what the command left behind used to end them), and none of the run's
/// variables or secrets reach it or the commands it runs.
#[test]
fn a_server_a_run_started_outlives_the_run_and_inherits_none_of_its_secrets() {
    const STEAD: &str = env!("CARGO_BIN_EXE_stead");
    const SECRET: &str = "tok-7f41-a-restarters-own";
    let dir = StateDir::new();
    let out = dir.root().join("out");
    std::fs::create_dir(&out).unwrap();
    crate::secrets::set_secret(&dir, "API_TOKEN", SECRET);
    let o = out.display();
    add_job(
        &dir,
        "other",
        &[],
        &format!("env > {o}/env.tmp && mv {o}/env.tmp {o}/other.env; exec sleep 120"),
    );
    // Each file is written whole before its name appears: the test reads them as soon
    // as they do.
    add_job(
        &dir,
        "restarter",
        &["--secret", "API_TOKEN"],
        &format!(
            "{STEAD} stop --json >/dev/null \
             && {STEAD} status --json > {o}/status.tmp && mv {o}/status.tmp {o}/status.json \
             && {STEAD} run other --json > {o}/other.tmp && mv {o}/other.tmp {o}/other.json"
        ),
    );
    let first = dir.status()["pid"].as_u64().unwrap();
    let id = json(&dir, &["run", "restarter"])["id"].as_i64().unwrap();
    // Nothing of the test's own talks to stead meanwhile: the run's command alone starts
    // the next server.
    wait_until("the run started another server and a run of it", || {
        out.join("other.json").exists()
    });
    let read = |name: &str| -> serde_json::Value {
        serde_json::from_slice(&std::fs::read(out.join(name)).unwrap()).unwrap()
    };
    let started = read("status.json")["pid"].as_u64().unwrap();
    let other = read("other.json")["id"].as_i64().unwrap();
    assert_ne!(
        started, first,
        "the run's command started a server of its own"
    );

    let run = wait_status(&dir, id, "succeeded");
    assert!(
        is_alive(started as u32),
        "the server the run started outlived it: {run:#}"
    );
    assert_eq!(
        dir.status()["pid"].as_u64(),
        Some(started),
        "and still serves\n{}",
        dir.log()
    );
    assert_eq!(
        run_of(&dir, other)["status"],
        "running",
        "with the run it started"
    );

    // None of the run's secrets or variables went on to the server or its commands.
    wait_until("the other run's command wrote its environment", || {
        out.join("other.env").exists()
    });
    let env = std::fs::read_to_string(out.join("other.env")).unwrap();
    assert!(env.contains(&format!("STEAD_RUN_ID={other}\n")), "{env}");
    assert!(!env.contains(SECRET), "the secret reached its command");
    assert!(!env.contains("STEAD_SECRET_VARS"), "{env}");
    let server_env = std::fs::read(format!("/proc/{started}/environ")).unwrap();
    let server_env: Vec<String> = server_env
        .split(|&b| b == 0)
        .map(|entry| String::from_utf8_lossy(entry).into_owned())
        .collect();
    assert!(
        server_env.iter().any(|entry| entry.starts_with("PATH=")),
        "the server's environment is read: {server_env:?}"
    );
    for entry in &server_env {
        assert!(!entry.contains(SECRET), "the secret reached the server");
        let name = entry.split('=').next().unwrap_or_default();
        assert!(
            !stead_protocol::run_env::RUN_VARIABLES.contains(&name) && name != "API_TOKEN",
            "the server inherited {name} of the run"
        );
    }

    json(&dir, &["cancel", &other.to_string()]);
    wait_status(&dir, other, "cancelled");
}

#[test]
fn stop_releases_everything_and_is_idempotent() {
    let dir = StateDir::new();
    let status = dir.status();
    let pid = status["pid"].as_u64().unwrap() as u32;
    let out = dir.run(&["stop", "--json"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stopped: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(stopped["was_running"], true);
    assert_eq!(stopped["exited"], true);
    assert!(!is_alive(pid));
    assert!(!std::path::Path::new(status["socket"].as_str().unwrap()).exists());
    assert!(!dir.path().join("server.lock.json").exists());

    let doctor: serde_json::Value =
        serde_json::from_slice(&dir.run(&["doctor", "--json"]).stdout).unwrap();
    let lease = doctor["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "lease")
        .unwrap();
    assert!(
        lease["summary"].as_str().unwrap().starts_with("released"),
        "{lease}"
    );

    let again = dir.run(&["stop"]);
    assert!(again.status.success());
    assert!(text(&again.stdout).contains("no stead server is running"));
}

#[test]
fn a_state_directory_too_long_for_a_socket_still_works() {
    let dir = StateDir::with_long_path();
    assert!(dir.path().join("stead.sock").as_os_str().len() > 104);
    let status = dir.status();
    let socket = status["socket"].as_str().unwrap();
    assert!(socket.len() <= 103, "{socket}");
    assert!(!socket.starts_with(dir.path().to_str().unwrap()));
    assert_eq!(dir.status()["server_id"], status["server_id"]);
    let meta = std::fs::metadata(socket).unwrap();
    assert_eq!(meta.permissions().mode() & 0o777, 0o600);
    let out = dir.run(&["stop"]);
    assert!(out.status.success());
    assert!(!std::path::Path::new(socket).exists());
}

#[test]
fn doctor_reports_a_healthy_directory() {
    let dir = StateDir::new();
    dir.status();
    let out = dir.run(&["doctor", "--json"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["health"], "ok", "{report}");
    let names: Vec<&str> = report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "state_dir",
            "disk",
            "lock_file",
            "secrets",
            "lease",
            "socket",
            "ledger",
            "sleep_inhibitor"
        ]
    );
    let human = text(&dir.run(&["doctor"]).stdout);
    assert!(human.contains("passes SQLite's integrity check"), "{human}");
}

#[test]
fn a_removed_socket_file_is_bound_again_by_the_live_server() {
    let dir = StateDir::new();
    let before = dir.status();
    let socket = std::path::PathBuf::from(before["socket"].as_str().unwrap());
    // What a /tmp cleaner or a careless `rm` does to a running server.
    std::fs::remove_file(&socket).unwrap();
    wait_until("the server binds its socket again", || socket.exists());
    let after = dir.status();
    assert_eq!(after["server_id"], before["server_id"]);
    // The server's log is written by a thread of its own: the line may follow the bind.
    wait_until("the server's log says why it bound again", || {
        dir.log().contains("the socket file had been removed")
    });
}

/// A state directory deleted under its server (`rm -rf`, a reset) and made afresh by the
/// next client belongs to the server that client started: the old one, whose ledger went
/// with the directory, stops at its next heartbeat instead of taking the socket back
/// (it used to bind it again, each server then taking it from the other in turn).
#[test]
fn a_server_whose_state_directory_was_deleted_stops_and_leaves_it_to_the_new_one() {
    let dir = StateDir::new();
    let old = dir.status();
    let old_pid = old["pid"].as_u64().unwrap() as u32;
    std::fs::remove_dir_all(dir.path()).unwrap();
    let new = dir.status();
    assert_ne!(new["server_id"], old["server_id"], "{new}");
    wait_until("the old server stops", || {
        !is_alive(old_pid) || is_zombie(old_pid)
    });
    let log = std::fs::read_to_string(dir.server_log()).unwrap_or_default();
    assert!(
        !log.contains("the socket file had been removed"),
        "the new server had its socket taken: {log}"
    );
    // The directory is the new server's, its socket untouched.
    assert_eq!(dir.status()["server_id"], new["server_id"]);
}
