//! A monitor done with its run takes the next one its server admits, for a moment,
//! instead of exiting. Its pid then outlives its run: a cancel meant for the run before
//! never reaches the next, and a monitor stopped or killed while it waits takes no run.

use serde_json::Value;

use crate::harness::{
    StateDir, add_job, is_alive, json, monitor_of, signal, wait_status, wait_until,
};

/// Tries of a scenario that needs a run admitted while the last run's monitor still
/// waits for one (it waits a second): on a slow machine a try can miss that moment.
const TRIES: usize = 5;

/// An on-demand run of `job`, waited for until it succeeded.
fn run_to_success(dir: &StateDir, job: &str) -> Value {
    let id = json(dir, &["run", job])["id"].as_i64().unwrap();
    wait_status(dir, id, "succeeded")
}

#[test]
fn a_cancel_sent_between_runs_does_not_reach_the_next_run_of_the_same_monitor() {
    let dir = StateDir::new();
    add_job(&dir, "t", &["--concurrency", "allow"], "true");
    for _ in 0..TRIES {
        let first = run_to_success(&dir, "t");
        let monitor = monitor_of(&first);
        if !is_alive(monitor) {
            continue;
        }
        // What a cancel of the first run read just before the run ended would send.
        signal(monitor, libc::SIGUSR1);
        let id = json(&dir, &["run", "t"])["id"].as_i64().unwrap();
        let mut next = Value::Null;
        wait_until(&format!("run {id} ended"), || {
            next = json(&dir, &["show", &id.to_string()]);
            !matches!(next["status"].as_str(), Some("queued" | "running"))
        });
        assert_eq!(next["status"], "succeeded", "{next}");
        if monitor_of(&next) == monitor {
            return;
        }
    }
    panic!("no run was taken by the monitor of the run before it in {TRIES} tries");
}

#[test]
fn a_monitor_killed_or_stopped_while_it_waits_takes_no_run() {
    let dir = StateDir::new();
    add_job(&dir, "t", &["--concurrency", "allow"], "true");
    for sig in [libc::SIGKILL, libc::SIGTERM] {
        let first = run_to_success(&dir, "t");
        let monitor = monitor_of(&first);
        signal(monitor, sig);
        wait_until(&format!("monitor {monitor} is gone"), || !is_alive(monitor));
        let next = run_to_success(&dir, "t");
        assert_ne!(monitor_of(&next), monitor, "{next}");
    }
}

#[test]
fn monitors_are_taken_again_and_every_run_is_recorded_once() {
    let dir = StateDir::new();
    add_job(
        &dir,
        "t",
        &["--concurrency", "allow"],
        "echo \"$STEAD_RUN_ID\"",
    );
    let ids: Vec<i64> = (0..30)
        .map(|_| json(&dir, &["run", "t"])["id"].as_i64().unwrap())
        .collect();
    let mut monitors = std::collections::BTreeSet::new();
    for id in &ids {
        let run = wait_status(&dir, *id, "succeeded");
        monitors.insert(monitor_of(&run));
        let log = dir.run(&["logs", &id.to_string()]);
        assert_eq!(
            String::from_utf8_lossy(&log.stdout).trim(),
            id.to_string(),
            "run {id}'s log holds its own output only"
        );
    }
    assert!(
        monitors.len() < ids.len(),
        "30 runs one after another took {} monitors",
        monitors.len()
    );
}
