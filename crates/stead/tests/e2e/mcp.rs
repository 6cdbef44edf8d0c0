//! `stead mcp`, driven by a real MCP client that stead did not write: the official Python
//! SDK (`mcp` from PyPI, installed by `scripts/setup-mcp` into target/mcp-venv). Each
//! scenario of mcp-tests/drive.py asserts as it goes; here the state directory is made
//! and every process in it is stopped when the test ends, even when it fails.
//!
//! And, with no SDK in between, the stream itself: everything `stead mcp` writes to
//! stdout is a JSON-RPC message, even while a restart command and a run print.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use serde_json::{Value, json};

use crate::harness::*;

/// A scenario runs a dozen calls, each a process start or a run: minutes are plenty.
const SCENARIO_PATIENCE: Duration = Duration::from_secs(120);

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The Python of target/mcp-venv, where `scripts/setup-mcp` (run by `scripts/test`)
/// installs the SDK.
fn python() -> PathBuf {
    let python = repo().join("target/mcp-venv/bin/python");
    assert!(
        python.exists(),
        "{} is missing: run scripts/setup-mcp (scripts/test does)",
        python.display()
    );
    python
}

/// Runs scenario `name` of drive.py on `dir`, with `work` for the files it makes.
fn scenario_in(dir: &StateDir, name: &str, work: &Path) {
    let mut cmd = dir.program(python().to_str().unwrap());
    cmd.arg(repo().join("mcp-tests/drive.py"))
        .arg(name)
        .arg(env!("CARGO_BIN_EXE_stead"))
        .arg(dir.path())
        .arg(work);
    let out = within(cmd, SCENARIO_PATIENCE);
    let stdout = text(&out.stdout);
    assert!(
        out.status.success() && stdout.contains(&format!("ok {name}")),
        "scenario {name}: {}\nstdout:\n{stdout}\nstderr:\n{}\nserver log:\n{}",
        out.status,
        text(&out.stderr),
        dir.log()
    );
}

fn scenario(dir: &StateDir, name: &str) {
    let work = tempfile::tempdir().unwrap();
    scenario_in(dir, name, work.path());
}

#[test]
fn an_mcp_client_initializes_and_finds_every_tool_with_its_schema_and_the_docs() {
    scenario(&StateDir::new(), "tools");
}

#[test]
fn an_agent_adds_a_job_runs_it_waits_reads_its_log_and_cancels_a_run() {
    scenario(&StateDir::new(), "jobs");
}

#[test]
fn the_gate_defers_while_a_hold_is_live_and_a_restart_goes_through_it() {
    let dir = StateDir::new();
    let work = tempfile::tempdir().unwrap();
    let marker = work.path().join("restarted");
    let restart = format!("echo restarting on stdout; touch {}", marker.display());
    let ready = format!("test -e {}", marker.display());
    let out = dir.run(&[
        "service",
        "add",
        "web",
        "--restart",
        &restart,
        "--ready",
        &ready,
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    // The scenario looks for the marker in the work directory it is given.
    scenario_in(&dir, "gate", work.path());
}

#[test]
fn bad_arguments_are_clear_tool_errors_and_change_nothing() {
    scenario(&StateDir::new(), "bad");
}

#[test]
fn a_read_only_server_offers_no_write_tool_and_refuses_one_called_anyway() {
    scenario(&StateDir::new(), "read_only");
}

#[test]
fn stdout_carries_nothing_but_protocol_messages() {
    let dir = StateDir::new();
    let work = tempfile::tempdir().unwrap();
    let marker = work.path().join("restarted");
    // A restart command and a run that both print, to stdout and to stderr.
    let restart = format!(
        "echo restart-on-stdout; echo restart-on-stderr >&2; touch {}",
        marker.display()
    );
    assert!(
        dir.run(&["service", "add", "web", "--restart", &restart])
            .status
            .success()
    );
    add_job(
        &dir,
        "loud",
        &[],
        "echo run-on-stdout; echo run-on-stderr >&2",
    );

    let mut mcp = ChildGuard(
        dir.stead(&["mcp"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let mut stdin = mcp.0.stdin.take().unwrap();
    let messages = [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "raw", "version": "1"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
            "name": "restart", "arguments": {"service": "web", "timeout": "30s"}}}),
        json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {
            "name": "run_now", "arguments": {"job": "loud", "wait": true, "timeout": "30s"}}}),
    ];
    for m in &messages {
        writeln!(stdin, "{m}").unwrap();
    }
    stdin.flush().unwrap();

    // Every line must be a JSON-RPC message; read until both calls are answered.
    let mut answered = std::collections::BTreeMap::new();
    let mut lines = BufReader::new(mcp.0.stdout.take().unwrap()).lines();
    while answered.len() < 3 {
        let line = lines
            .next()
            .expect("stdout open until the calls are answered")
            .unwrap();
        let message = protocol_message(&line);
        if let Some(id) = message["id"].as_i64() {
            answered.insert(id, message);
        }
    }
    assert_eq!(answered[&2]["result"]["isError"], false, "{}", answered[&2]);
    assert_eq!(
        answered[&2]["result"]["structuredContent"]["restarted"],
        true
    );
    assert!(marker.exists(), "the restart command ran");
    let run = &answered[&3]["result"]["structuredContent"];
    assert_eq!(run["status"], "succeeded", "{}", answered[&3]);

    // The client hangs up: the server ends, having written nothing more but messages.
    drop(stdin);
    for line in lines {
        protocol_message(&line.unwrap());
    }
    let mut status = None;
    wait_until("stead mcp exits once its stdin closes", || {
        status = mcp.0.try_wait().unwrap();
        status.is_some()
    });
    assert!(status.unwrap().success(), "{status:?}");
}

/// A line of `stead mcp`'s stdout, which must be a JSON-RPC 2.0 message.
fn protocol_message(line: &str) -> Value {
    let message: Value = serde_json::from_str(line)
        .unwrap_or_else(|e| panic!("not a protocol message on stdout ({e}): {line:?}"));
    assert_eq!(message["jsonrpc"], "2.0", "{line}");
    message
}
