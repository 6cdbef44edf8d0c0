//! Bad input of every kind gets a clear error, deletes nothing, and leaves the server
//! serving everyone else.

use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::time::Duration;

use serde_json::{Value, json};

use crate::harness::*;

struct Raw {
    reader: BufReader<UnixStream>,
}

impl Raw {
    fn open(socket: &str) -> (Self, Value) {
        let stream = UnixStream::connect(socket).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(20)))
            .unwrap();
        let mut raw = Self {
            reader: BufReader::new(stream),
        };
        let hello = raw.read();
        (raw, hello)
    }

    fn send(&mut self, bytes: &[u8]) {
        self.reader.get_mut().write_all(bytes).unwrap();
    }

    fn read(&mut self) -> Value {
        let mut line = String::new();
        self.reader.read_line(&mut line).unwrap();
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line:?}"))
    }

    fn ask(&mut self, bytes: &[u8]) -> Value {
        self.send(bytes);
        self.read()
    }
}

#[test]
fn garbage_long_lines_and_unknown_methods_get_clear_errors() {
    let dir = StateDir::new();
    let status = dir.status();
    let socket = status["socket"].as_str().unwrap();
    let (mut raw, hello) = Raw::open(socket);
    assert_eq!(hello["hello"]["protocol"], "stead/1");
    assert_eq!(hello["hello"]["server_id"], status["server_id"]);

    let r = raw.ask(b"this is not json\n");
    assert_eq!(r["id"], Value::Null);
    assert_eq!(r["error"]["code"], "invalid_json");

    let mut long = vec![b'x'; 1024 * 1024 + 1];
    long.push(b'\n');
    let r = raw.ask(&long);
    assert_eq!(r["error"]["code"], "line_too_long");

    let r = raw.ask(b"{\"id\": 3, \"method\": \"launch_missiles\"}\n");
    assert_eq!(r["id"], 3);
    assert_eq!(r["error"]["code"], "unknown_method");
    assert!(r["error"]["message"].as_str().unwrap().contains("status"));

    let r = raw.ask(b"{\"id\": \"four\", \"method\": \"status\"}\n");
    assert_eq!(r["error"]["code"], "invalid_request");

    let r = raw.ask(b"[1, 2, 3]\n");
    assert_eq!(r["error"]["code"], "invalid_request");

    let r = raw.ask(b"\xff\xfe\xfd\n");
    assert_eq!(r["error"]["code"], "invalid_json");

    let r = raw.ask(b"{\"id\": 5, \"method\": \"stop\", \"params\": {\"bogus\": 1}}\n");
    assert_eq!(r["id"], 5);
    assert_eq!(r["error"]["code"], "invalid_params");

    // Blank lines are ignored; the same connection still works.
    let r = raw.ask(b"\n\n{\"id\": 6, \"method\": \"status\"}\n");
    assert_eq!(r["id"], 6);
    assert_eq!(r["result"]["server_id"], status["server_id"]);

    // And so does everyone else's.
    assert_eq!(dir.status()["server_id"], status["server_id"]);
}

#[test]
fn a_client_that_sends_half_a_line_and_hangs_blocks_nobody() {
    let dir = StateDir::new();
    let status = dir.status();
    let (mut raw, _) = Raw::open(status["socket"].as_str().unwrap());
    raw.send(b"{\"id\": 1, \"method\": \"sta");
    assert_eq!(dir.status()["server_id"], status["server_id"]);
    raw.send(b"tus\"}\n");
    assert_eq!(raw.read()["result"]["server_id"], status["server_id"]);
}

#[test]
fn a_corrupt_lock_file_never_blocks_startup() {
    let dir = StateDir::new();
    std::fs::create_dir(dir.path()).unwrap();
    std::fs::write(
        dir.path().join("server.lock.json"),
        b"{\"schema\": \"stead.ser",
    )
    .unwrap();
    let status = dir.status();
    assert_eq!(status["epoch"], 1);
    assert!(
        dir.log().contains("lock file was unreadable"),
        "{}",
        dir.log()
    );
    let lock: Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("server.lock.json")).unwrap())
            .unwrap();
    assert_eq!(lock["server_id"], status["server_id"]);
}

#[test]
fn a_corrupt_ledger_is_reported_and_left_untouched() {
    let dir = StateDir::new();
    std::fs::create_dir(dir.path()).unwrap();
    let ledger = dir.path().join("stead.db");
    let garbage = b"definitely not SQLite; someone's notes\n".repeat(500);
    std::fs::write(&ledger, &garbage).unwrap();

    let out = dir.run(&["status"]);
    // The spawned server's own exit code (74: the ledger cannot be used), not "try again".
    assert_eq!(out.status.code(), Some(74), "{out:?}");
    let stderr = text(&out.stderr);
    assert!(
        stderr.starts_with("stead: stead server could not start: "),
        "{stderr}"
    );
    assert!(
        stderr.contains("not a readable SQLite database"),
        "{stderr}"
    );
    assert!(stderr.contains(ledger.to_str().unwrap()), "{stderr}");
    assert_eq!(
        std::fs::read(&ledger).unwrap(),
        garbage,
        "the ledger was modified"
    );
    assert!(dir.server_pids().is_empty());

    let out = dir.run(&["doctor", "--json"]);
    assert_eq!(out.status.code(), Some(1));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["health"], "problem");
    let ledger_check = report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "ledger")
        .unwrap();
    assert_eq!(ledger_check["health"], "problem");
    assert!(ledger_check["fix"].as_str().unwrap().contains("mv "));
    assert_eq!(std::fs::read(&ledger).unwrap(), garbage);
}

#[test]
fn a_bad_config_names_the_problem() {
    let dir = StateDir::new();
    dir.write_config("[timings]\nlease_seconds = 3\n");
    let out = dir.run(&["status"]);
    assert_eq!(out.status.code(), Some(78));
    let stderr = text(&out.stderr);
    assert!(stderr.contains("config.toml"), "{stderr}");
    assert!(stderr.contains("lease_seconds"), "{stderr}");

    let mut dir = StateDir::new();
    dir.set_env("STEAD_LEASE_MS", "soon");
    let out = dir.run(&["status"]);
    assert_eq!(out.status.code(), Some(78));
    assert!(text(&out.stderr).contains("STEAD_LEASE_MS"));

    // One setting in both its spellings: which one was meant is not guessed.
    let dir = StateDir::new();
    dir.write_config("[retention]\nruns_max_age = \"30d\"\nruns_max_age_ms = 1000\n");
    let out = dir.run(&["status"]);
    assert_eq!(out.status.code(), Some(78));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("both [retention] runs_max_age and [retention] runs_max_age_ms"),
        "{stderr}"
    );
}

#[test]
fn a_config_in_units_reaches_the_server() {
    let mut dir = StateDir::new();
    // Empty, the harness's lease is unset and the file's counts; the heartbeat's variable
    // takes the file's forms too.
    dir.set_env("STEAD_LEASE_MS", "");
    dir.set_env("STEAD_HEARTBEAT_MS", "500ms");
    dir.remove_env("STEAD_LOGS_KEEP_FREE");
    dir.write_config("[timings]\nlease = \"1d\"\n[logs]\nkeep_free = \"1GiB\"\n");
    let status = dir.status();
    let lease_ms = ms_of(status["lease_expires_at"].as_str().unwrap())
        - ms_of(status["started_at"].as_str().unwrap());
    assert!(lease_ms > 23 * 3_600_000, "{status}");
    if let Some(reserve) = status["disk"]["reserve_bytes"].as_u64() {
        assert_eq!(reserve, 1 << 30);
    }
}

#[test]
fn status_json_round_trips_through_the_protocol_type() {
    let dir = StateDir::new();
    let status = dir.status();
    let typed: stead_protocol::StatusResult = serde_json::from_value(status.clone()).unwrap();
    assert_eq!(json!(typed), status);
}
