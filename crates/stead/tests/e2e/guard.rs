//! The guard as agents run it: `stead guard --hook`, the real binary, answering 2 for
//! what it cannot read safely (a command nested thousands deep, input that makes the
//! shell parser fail, a tool call too large to read) instead of crashing, which an
//! agent would read as "not blocked".

use std::io::Write;
use std::process::{Output, Stdio};

use serde_json::{Value, json};

use crate::harness::*;

/// Runs the hook with `input` on stdin. The input is written from a thread of its own:
/// the hook stops reading past its limit, and the test must not block on a full pipe.
pub fn hook(dir: &StateDir, input: Vec<u8>) -> Output {
    let mut child = dir
        .stead(&["guard", "--hook"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(&input);
    });
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    out
}

fn bash(command: &str) -> Vec<u8> {
    json!({"tool_name": "Bash", "tool_input": {"command": command}})
        .to_string()
        .into_bytes()
}

fn denied(dir: &StateDir, input: Vec<u8>, why: &str) {
    let out = hook(dir, input);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    let answer: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(answer["hookSpecificOutput"]["permissionDecision"], "deny");
    let reason = answer["hookSpecificOutput"]["permissionDecisionReason"]
        .as_str()
        .unwrap();
    assert!(reason.contains(why), "{reason}");
}

#[test]
fn the_hook_denies_what_it_cannot_read_safely_and_never_crashes() {
    let dir = StateDir::new();
    let groups = "{ ".repeat(1500) + "ls" + &"; }".repeat(1500);
    denied(&dir, bash(&groups), "nested too deep");
    let ifs = "if true; then ".repeat(1500) + "ls" + &"; fi".repeat(1500);
    denied(&dir, bash(&ifs), "nested too deep");
    let substitutions = "echo \"$(".repeat(5000) + "ls" + &")\"".repeat(5000);
    denied(&dir, bash(&substitutions), "nested too deep");
    // The shell parser panics on this; nothing in it names a service.
    denied(&dir, bash("${<<EOF\n}\nEOF"), "parser failed");
    // A tool call larger than the guard reads.
    let huge = bash(&"x".repeat(9 << 20));
    denied(&dir, huge, "larger than");
    // A subshell in a subshell, which the parser takes for arithmetic.
    denied(
        &dir,
        bash("( (stead stop) )"),
        "stop the guarded service stead",
    );

    let ordinary = hook(&dir, bash("cargo test && git status"));
    assert_eq!(
        ordinary.status.code(),
        Some(0),
        "{}",
        text(&ordinary.stderr)
    );
    assert!(ordinary.stdout.is_empty());
}

#[test]
fn a_refusal_without_a_suggestion_says_so() {
    let dir = StateDir::new();
    let out = dir.run(&["guard", "--json", "--", "echo \"unterminated; pkill stead"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    let verdict: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(verdict["allowed"], false);
    assert_eq!(verdict["service"], "stead");
    assert!(verdict["instead"].is_null(), "{verdict}");
    assert!(
        verdict["reason"]
            .as_str()
            .unwrap()
            .contains("does not parse")
    );
    let deep = "( ".repeat(1000) + "ls" + &" )".repeat(1000);
    let out = dir.run(&["guard", "--json", "--", &deep]);
    assert_eq!(out.status.code(), Some(2));
    let verdict: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(verdict["service"].is_null(), "{verdict}");
    let out = dir.run(&["guard", "--", &deep]);
    assert!(
        text(&out.stderr).contains("no command to suggest"),
        "{}",
        text(&out.stderr)
    );
}
