//! A monitor done with its run takes the next one its server admits, for a moment,
//! instead of exiting. Its pid then outlives its run: a cancel meant for the run before
//! never reaches the next, and a monitor stopped or killed while it waits takes no run.
//! An on-demand run taken by a waiting monitor is recorded running for it in the commit
//! that admits it: a cancel sent before the hand-over reaches it, and a server killed in
//! between leaves the run settled, its command never started.

use serde_json::Value;

use crate::harness::{
    StateDir, WRITES_ITS_START, add_job, is_alive, json, monitor_of, ms_of, ran, run_of, signal,
    started_on_its_own_clock, wait_status, wait_until, writes_its_id,
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
        // A try counts only when the monitor still waited as it was signalled: one that
        // had already given up and exited would take no run anyway.
        let waited = (0..TRIES).any(|_| {
            let monitor = monitor_of(&run_to_success(&dir, "t"));
            if !is_alive(monitor) {
                return false;
            }
            signal(monitor, sig);
            wait_until(&format!("monitor {monitor} is gone"), || !is_alive(monitor));
            let next = run_to_success(&dir, "t");
            assert_ne!(monitor_of(&next), monitor, "{next}");
            true
        });
        assert!(waited, "no monitor still waited for a run in {TRIES} tries");
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

/// A job `t`, runs at once allowed, whose runs write their ids to the file answered.
fn job_writing_its_id(dir: &StateDir) -> std::path::PathBuf {
    let file = dir.root().join("ran");
    add_job(dir, "t", &["--concurrency", "allow"], &writes_its_id(&file));
    file
}

/// Runs `quick` to success, then admits a run of `job`, until one is taken by the
/// monitor of the run before it (which waits for a run a second: a slow machine can
/// miss it): that run's admission, as answered. A run of `job` that missed is cancelled.
fn a_run_taken_by_a_waiting_monitor(dir: &StateDir, quick: &str, job: &str) -> Value {
    for _ in 0..TRIES {
        let monitor = monitor_of(&run_to_success(dir, quick));
        let admitted = json(dir, &["run", job]);
        if admitted["monitor_pid"].as_u64() == Some(u64::from(monitor)) {
            return admitted;
        }
        let id = admitted["id"].as_i64().unwrap();
        // Ended already, or ended by this.
        dir.run(&["cancel", &id.to_string()]);
        wait_until(&format!("run {id} ended"), || {
            !matches!(
                run_of(dir, id)["status"].as_str(),
                Some("queued" | "running")
            )
        });
    }
    panic!("no run was taken by a waiting monitor in {TRIES} tries");
}

#[test]
fn a_run_taken_by_a_waiting_monitor_is_admitted_running_and_runs_once() {
    let dir = StateDir::new();
    let file = job_writing_its_id(&dir);
    let admitted = a_run_taken_by_a_waiting_monitor(&dir, "t", "t");
    // Answered as the commit left it: running, for the monitor that takes it, from the
    // instant it was admitted.
    assert_eq!(admitted["status"], "running", "{admitted}");
    assert_eq!(admitted["started_at"], admitted["created_at"], "{admitted}");
    let id = admitted["id"].as_i64().unwrap();
    let run = wait_status(&dir, id, "succeeded");
    assert_eq!(run["monitor_pid"], admitted["monitor_pid"], "{run}");
    let counts = ran(&file);
    assert_eq!(counts.get(&id), Some(&1), "{counts:?}");
    assert!(counts.values().all(|n| *n == 1), "{counts:?}");
}

/// The run is held back from its monitor for a while after its commit (debug builds:
/// `STEAD_TEST_HAND_OVER_LATE`), and cancelled meanwhile: the cancel waits for the
/// hand-over, and the monitor keeps it (it carries the run's id), so the command never
/// starts.
#[test]
fn a_run_cancelled_before_its_waiting_monitor_has_it_never_starts() {
    let mut dir = StateDir::new();
    dir.set_env("STEAD_TEST_HAND_OVER_LATE", "slow:400");
    let file = dir.root().join("ran");
    add_job(&dir, "quick", &["--concurrency", "allow"], "true");
    add_job(
        &dir,
        "slow",
        &[],
        &format!("{}; sleep 30", writes_its_id(&file)),
    );
    let admitted = a_run_taken_by_a_waiting_monitor(&dir, "quick", "slow");
    let id = admitted["id"].as_i64().unwrap();
    let cancelled = json(&dir, &["cancel", &id.to_string()]);
    assert_eq!(cancelled["status"], "cancelled", "{cancelled}");
    let run = run_of(&dir, id);
    assert_eq!(run["status"], "cancelled", "{run}");
    assert!(
        run["reason"]
            .as_str()
            .unwrap_or("")
            .contains("before it started"),
        "{run}"
    );
    assert!(run["started_at"].is_null(), "it never started: {run}");
    assert_eq!(ran(&file).get(&id), None, "its command never ran");
}

/// A run taken by a waiting monitor is marked running from its admission, and its
/// command starts once it is handed over (held back here: debug builds'
/// `STEAD_TEST_HAND_OVER_LATE`): its end records when the command started.
#[test]
fn a_run_taken_by_a_waiting_monitor_records_when_its_command_started() {
    let mut dir = StateDir::new();
    dir.set_env("STEAD_TEST_HAND_OVER_LATE", "clock:500");
    add_job(&dir, "quick", &["--concurrency", "allow"], "true");
    let mut add = vec!["job", "add", "clock", "--"];
    add.extend(WRITES_ITS_START);
    json(&dir, &add);
    let admitted = a_run_taken_by_a_waiting_monitor(&dir, "quick", "clock");
    let run = wait_status(&dir, admitted["id"].as_i64().unwrap(), "succeeded");
    started_on_its_own_clock(&run);
    let marked = ms_of(admitted["started_at"].as_str().unwrap());
    assert!(
        ms_of(run["started_at"].as_str().unwrap()) >= marked + 400,
        "the start is the command's, not the admission's: {run}"
    );
}

/// The server is SIGKILLed between the commit that marked the run for a waiting monitor
/// and the hand-over: the monitor, its link gone, exits without the run; the next server
/// settles the run, whose command never started, and nothing runs twice.
#[test]
fn a_server_killed_before_handing_over_a_marked_run_leaves_it_settled_and_never_run() {
    let mut dir = StateDir::new();
    // Only the run that is to be cut is held back: the runs before it, which the tries
    // need to run to their ends, are handed over at once.
    dir.set_env("STEAD_TEST_HAND_OVER_LATE", "late:60000");
    let file = job_writing_its_id(&dir);
    add_job(&dir, "late", &[], &writes_its_id(&file));
    let admitted = a_run_taken_by_a_waiting_monitor(&dir, "t", "late");
    let (id, monitor) = (admitted["id"].as_i64().unwrap(), monitor_of(&admitted));
    dir.kill_servers();
    wait_until(&format!("monitor {monitor} left with its link"), || {
        !is_alive(monitor)
    });
    // The next server finds the run's monitor gone: settled, and owed.
    dir.status();
    let run = wait_status(&dir, id, "interrupted");
    assert!(
        run["reason"].as_str().unwrap_or("").contains("monitor"),
        "{run}"
    );
    // No end came from a monitor to say otherwise: the mark stays.
    assert_eq!(run["started_at"], admitted["started_at"], "{run}");
    let counts = ran(&file);
    assert_eq!(counts.get(&id), None, "{counts:?}");
    assert!(!counts.is_empty(), "the runs before it ran");
    assert!(counts.values().all(|n| *n == 1), "{counts:?}");
}
