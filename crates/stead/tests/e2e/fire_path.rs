//! The fire path's shortcuts keep every rule: fires admitted ahead of their instant,
//! monitors forked by the spawner, marks and ends written together. A crash between a
//! fire's commit and its command (the server, or the server with the fire's monitor,
//! SIGKILLed while the fire waits for its instant) and a burst cut by SIGKILL leave each
//! fire recorded once, run at most once, and none lost.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;
use std::time::Duration;

use serde_json::Value;

use crate::harness::{
    StateDir, add_job, clock_fires, fire_times, json, ms_of, now_ms, ran, run_of, runs_of, signal,
    started_on_its_own_clock, text, wait_status, wait_until, wait_until_within, writes_its_id,
};

/// Every run of this directory, of every job, the skipped fires among them.
fn all_runs(dir: &StateDir) -> Vec<Value> {
    json(dir, &["runs", "--limit", "5000"])
        .as_array()
        .unwrap()
        .clone()
}

fn in_flight(runs: &[Value]) -> bool {
    runs.iter()
        .any(|r| r["status"] == "queued" || r["status"] == "running")
}

#[test]
fn a_burst_cut_by_sigkill_runs_every_fire_once_and_loses_none() {
    let dir = StateDir::new();
    let file = dir.root().join("ran");
    let mut jobs = String::new();
    for i in 0..20 {
        let _ = writeln!(
            jobs,
            "[[job]]\nname = \"b{i:02}\"\nevery = \"1s\"\nconcurrency = \"allow\"\n\
             shell = true\ncommand = [{:?}]\n",
            writes_its_id(&file)
        );
    }
    let apply = dir.root().join("burst.toml");
    std::fs::write(&apply, jobs).unwrap();
    json(&dir, &["apply", apply.to_str().unwrap()]);
    wait_until("the first fires ran", || ran(&file).len() >= 20);
    // Cut in the middle of the bursts: fires are admitted, staged and marked meanwhile.
    dir.kill_servers();
    let killed_at = now_ms();
    wait_until("two fire times pass while the server is dead", || {
        now_ms() > killed_at + 2_000
    });
    dir.status();
    let restarted_at = now_ms();
    wait_until_within(
        "fires run again after the restart",
        Duration::from_secs(60),
        || {
            all_runs(&dir).iter().any(|r| {
                r["status"] == "succeeded"
                    && ms_of(r["scheduled_at"].as_str().unwrap_or("1970-01-01T00:00:00Z"))
                        > restarted_at + 1_000
            })
        },
    );
    // No more fires.
    for i in 0..20 {
        json(&dir, &["job", "disable", &format!("b{i:02}")]);
    }
    let mut runs = Vec::new();
    wait_until_within("every run settled", Duration::from_secs(60), || {
        runs = all_runs(&dir);
        !in_flight(&runs)
    });

    let counts = ran(&file);
    let twice: Vec<_> = counts.iter().filter(|(_, n)| **n > 1).collect();
    assert!(twice.is_empty(), "runs whose command ran twice: {twice:?}");
    let by_id: BTreeMap<i64, &Value> = runs
        .iter()
        .map(|r| (r["id"].as_i64().unwrap(), r))
        .collect();
    for id in counts.keys() {
        let run = by_id
            .get(id)
            .unwrap_or_else(|| panic!("run {id} ran but is not on the ledger"));
        assert_ne!(run["status"], "skipped", "{run}");
    }
    for run in &runs {
        let id = run["id"].as_i64().unwrap();
        match run["status"].as_str().unwrap() {
            // A success ran its command, once.
            "succeeded" => assert_eq!(counts.get(&id), Some(&1), "{run}"),
            // Cut: by the kill, never called a failure; what a cut one owes is settled.
            "interrupted" | "skipped" => {}
            other => panic!("a run ended {other}: {run}"),
        }
    }
    // Every second from each job's first fire to its last is on the ledger, once.
    for i in 0..20 {
        let job = format!("b{i:02}");
        let fires: Vec<Value> = runs_of(&dir, &job)
            .into_iter()
            .filter(|r| r["trigger"] != "resume")
            .collect();
        let times = fire_times(&fires);
        for pair in times.windows(2) {
            assert_eq!(
                pair[1] - pair[0],
                1_000,
                "{job}: a fire is missing: {fires:?}"
            );
        }
    }
}

/// A job firing every 4 s whose fires are admitted 2 s ahead; answers the id and the
/// instant (ms since the epoch) of the first fire seen taken by its monitor (marked
/// `running`, waiting for its instant) whose instant is at least `ahead_ms` away.
///
/// Taken, not merely admitted: a fire still `queued` when its server dies has no monitor
/// yet, and waits for the next server, which is not what these tests are about (under
/// load the hand-over can take longer than the lead).
fn a_fire_waiting_for_its_instant(dir: &StateDir, file: &Path, ahead_ms: i64) -> (i64, i64) {
    add_job(dir, "ahead", &["--every", "4s"], &writes_its_id(file));
    let mut ahead = Value::Null;
    wait_until_within(
        "a fire taken by its monitor ahead of its instant",
        Duration::from_secs(30),
        || {
            ahead = runs_of(dir, "ahead")
                .into_iter()
                .find(|r| {
                    r["status"] == "running"
                        && r["monitor_pid"].is_u64()
                        && ms_of(r["scheduled_at"].as_str().unwrap()) > now_ms() + ahead_ms
                })
                .unwrap_or(Value::Null);
            !ahead.is_null()
        },
    );
    (
        ahead["id"].as_i64().unwrap(),
        ms_of(ahead["scheduled_at"].as_str().unwrap()),
    )
}

fn ahead_of_time() -> StateDir {
    let mut dir = StateDir::new();
    dir.set_env("STEAD_FIRE_LEAD_MS", "2000");
    dir
}

#[test]
fn a_fire_admitted_ahead_runs_once_on_its_instant_when_its_server_is_killed_first() {
    let dir = ahead_of_time();
    let file = dir.root().join("ran");
    let (id, instant) = a_fire_waiting_for_its_instant(&dir, &file, 300);
    dir.kill_servers();
    // Its monitor, already waiting, starts it on its instant with no server to ask.
    wait_until("the fire ran without its server", || {
        ran(&file).contains_key(&id)
    });
    let run = run_of(&dir, id);
    assert_eq!(run["status"], "succeeded", "{run}");
    assert!(
        ms_of(run["started_at"].as_str().unwrap()) >= instant,
        "{run}"
    );
    json(&dir, &["job", "disable", "ahead"]);
    wait_until("nothing in flight", || !in_flight(&runs_of(&dir, "ahead")));
    let counts = ran(&file);
    assert!(counts.values().all(|n| *n == 1), "{counts:?}");
    fire_times(&runs_of(&dir, "ahead"));
}

#[test]
fn a_server_restarted_before_a_fire_admitted_ahead_leaves_it_to_its_monitor() {
    let dir = ahead_of_time();
    let file = dir.root().join("ran");
    let (id, instant) = a_fire_waiting_for_its_instant(&dir, &file, 1_500);
    dir.kill_servers();
    dir.status();
    assert!(
        now_ms() < instant,
        "the new server should have started before the fire's instant"
    );
    // Not cut at the new server's reconcile: its monitor marks and runs it.
    let run = wait_status(&dir, id, "succeeded");
    assert!(run["monitor_pid"].is_u64(), "{run}");
    json(&dir, &["job", "disable", "ahead"]);
    wait_until("nothing in flight", || !in_flight(&runs_of(&dir, "ahead")));
    let counts = ran(&file);
    assert_eq!(counts.get(&id), Some(&1), "{counts:?}");
    assert!(counts.values().all(|n| *n == 1), "{counts:?}");
}

#[test]
fn a_fire_admitted_ahead_whose_monitor_dies_with_its_server_is_cut_and_never_run_twice() {
    let dir = ahead_of_time();
    let file = dir.root().join("ran");
    let (id, _) = a_fire_waiting_for_its_instant(&dir, &file, 300);
    // The whole host's stead at once: server, spawner, monitors.
    dir.kill_servers();
    for pid in dir.monitor_pids() {
        signal(pid, libc::SIGKILL);
    }
    let run = {
        let mut run = Value::Null;
        wait_until("the restarted server settles the cut fire", || {
            run = run_of(&dir, id);
            run["status"] != "queued" && run["status"] != "running"
        });
        run
    };
    assert_eq!(run["status"], "interrupted", "{run}");
    json(&dir, &["job", "disable", "ahead"]);
    let mut runs = Vec::new();
    wait_until_within("nothing in flight", Duration::from_secs(30), || {
        runs = runs_of(&dir, "ahead");
        !in_flight(&runs)
            && runs
                .iter()
                .all(|r| r["status"] != "interrupted" || !r["resolution"].is_null())
    });
    let counts = ran(&file);
    assert!(!counts.contains_key(&id), "the cut fire ran: {counts:?}");
    assert!(counts.values().all(|n| *n == 1), "{counts:?}");
    // Its resume, if its debt was paid so, ran once as a run of its own.
    for resume in runs.iter().filter(|r| r["parent_id"] == id) {
        assert_eq!(resume["trigger"], "resume", "{resume}");
    }
    fire_times(
        &runs
            .iter()
            .filter(|r| r["trigger"] != "resume")
            .cloned()
            .collect::<Vec<_>>(),
    );
}

/// A fire's monitor takes it during its lead (the mark is not on the way from the
/// instant to the command) and waits: a cancel then is heard at once, the command never
/// runs, and the run does not end before it started.
#[test]
fn a_fire_taken_ahead_of_its_instant_and_cancelled_never_runs() {
    let dir = ahead_of_time();
    let file = dir.root().join("ran");
    let (id, instant) = a_fire_waiting_for_its_instant(&dir, &file, 1_000);
    let run = wait_status(&dir, id, "running");
    assert_eq!(
        ms_of(run["started_at"].as_str().unwrap()),
        instant,
        "taken ahead, recorded as starting on its instant: {run}"
    );
    let cancelled = json(&dir, &["cancel", &id.to_string()]);
    assert_eq!(cancelled["status"], "cancelled", "{cancelled}");
    assert!(
        now_ms() < instant,
        "the cancel was answered before the fire's instant, not after it"
    );
    assert_eq!(
        cancelled["reason"], "cancelled before it started",
        "{cancelled}"
    );
    assert!(
        cancelled["started_at"].is_null(),
        "its command never started: {cancelled}"
    );
    json(&dir, &["job", "disable", "ahead"]);
    wait_until("nothing in flight", || !in_flight(&runs_of(&dir, "ahead")));
    assert!(
        !ran(&file).contains_key(&id),
        "the cancelled fire ran: {:?}",
        ran(&file)
    );
}

/// Fires admitted and taken 2 s ahead of their instants start on them, and each run's
/// start is its command's, not its admission's nor its mark's.
#[test]
fn fires_taken_ahead_record_when_their_commands_started() {
    let dir = ahead_of_time();
    for run in clock_fires(&dir, "3s", 2) {
        let own = started_on_its_own_clock(&run);
        let instant = ms_of(run["scheduled_at"].as_str().unwrap());
        assert!(own >= instant, "started before its instant: {run}");
        assert!(
            ms_of(run["created_at"].as_str().unwrap()) < instant - 1_000,
            "{run}"
        );
    }
}

/// A fire is taken ahead of its instant, but its mark is answered only after the instant
/// (held back as a burst of marks waiting for the disk holds it: debug builds'
/// `STEAD_TEST_MARK_LATE_MS`), so its command starts late: the run's start is when its
/// command started, as the command's own clock says, not the instant it was marked with.
#[test]
fn a_fire_whose_mark_is_answered_late_records_when_its_command_started() {
    let mut dir = StateDir::new();
    dir.set_env("STEAD_FIRE_LEAD_MS", "300");
    dir.set_env("STEAD_TEST_MARK_LATE_MS", "800");
    for run in &clock_fires(&dir, "2s", 2) {
        let own = started_on_its_own_clock(run);
        let instant = ms_of(run["scheduled_at"].as_str().unwrap());
        // Started late, as its mark came late: what the ledger said before.
        assert!(own >= instant + 300, "{run}");
    }
}

#[test]
fn a_killed_spawner_costs_no_run_and_is_replaced() {
    let dir = StateDir::new();
    add_job(&dir, "now", &[], "echo ran");
    let wait = |dir: &StateDir| {
        let out = dir.run(&["run", "now", "--wait", "--json"]);
        assert!(out.status.success(), "{}", text(&out.stderr));
        let run: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(run["status"], "succeeded", "{run}");
    };
    wait(&dir);
    // The first run's monitor was exec'd, and a spawner started for the next.
    let mut first = Vec::new();
    wait_until("one spawner serves the directory", || {
        first = dir.spawner_pids();
        first.len() == 1
    });
    // Asked for a monitor, so that it is the one killed below that fails the next run.
    wait(&dir);
    assert_eq!(dir.spawner_pids(), first);
    signal(first[0], libc::SIGKILL);
    // The monitor of the run before leaves once it has waited for another run in vain:
    // the next run must then ask the spawner for one.
    wait_until("no monitor waits for a run", || {
        dir.monitor_pids().is_empty()
    });
    // The run asked of the dead spawner is started by exec instead.
    wait(&dir);
    wait(&dir);
    // The run that found none started one for the next, beside its exec'd monitor.
    let mut next = Vec::new();
    wait_until("a new spawner runs", || {
        next = dir.spawner_pids();
        next.len() == 1
    });
    assert_ne!(next, first);
}

/// An idle server keeps no spawner: a run starts one, which is let go once no run has
/// asked for a monitor for `spawner_idle`; a scheduled fire has one started ahead of its
/// instant, so that start costs the fire nothing.
#[test]
fn the_spawner_lives_while_runs_start_and_is_started_ahead_of_a_fire() {
    const STARTED: &str = "started the spawner of monitors";
    let mut dir = StateDir::new();
    dir.set_env("STEAD_SPAWNER_IDLE_MS", "500");
    dir.status();
    assert!(dir.spawner_pids().is_empty(), "an idle server keeps none");
    add_job(&dir, "now", &[], "echo ran");
    let run = json(&dir, &["run", "now", "--wait"]);
    assert_eq!(run["status"], "succeeded", "{run}");
    assert!(dir.log().contains(STARTED), "the run started one");
    wait_until("the idle spawner is let go", || {
        dir.spawner_pids().is_empty()
    });
    assert!(dir.log().contains("the spawner is let go"), "{}", dir.log());

    // Fires 6 s apart: each finds the spawner let go since the one before (a second
    // after it, the idle half-second later), and has one started 2 s ahead of it.
    add_job(&dir, "tick", &["--every", "6s"], "echo tick");
    let mut fired = Vec::new();
    wait_until("two fires ended", || {
        fired = runs_of(&dir, "tick")
            .into_iter()
            .filter(|r| r["ended_at"].is_string())
            .collect();
        fired.len() >= 2
    });
    let log = dir.log();
    let starts: Vec<i64> = log
        .lines()
        .filter(|line| line.contains(STARTED))
        .filter_map(|line| line.split_whitespace().next())
        .map(ms_of)
        .collect();
    for run in &fired {
        assert_eq!(run["status"], "succeeded", "{run}");
        let instant = ms_of(run["scheduled_at"].as_str().unwrap());
        // Not by the fire itself, a lead (20 ms) before its instant: a second before
        // it at the latest.
        assert!(
            starts
                .iter()
                .any(|&at| instant - 3_000 <= at && at <= instant - 1_000),
            "a spawner was started 1 to 3 s before the fire at {instant}: {starts:?}\n{log}"
        );
    }
}

/// The spawner forks the monitor but answers after the server's patience (2 s): the
/// server gives up on it, kills the spawner and execs a second monitor for the same run,
/// which finds the run taken by the first and leaves. The run must be the first
/// monitor's: not cut when the second exits, run once, ended as its command ended.
/// (Debug builds hold the spawner's answer back for `STEAD_TEST_SPAWNER_LATE_MS`.)
#[test]
fn a_monitor_forked_after_the_server_gave_up_on_the_spawner_keeps_its_run() {
    let mut dir = StateDir::new();
    dir.set_env("STEAD_TEST_SPAWNER_LATE_MS", "2500");
    let file = dir.root().join("ran");
    // Long enough to outlive the second monitor's start and exit by seconds.
    add_job(
        &dir,
        "late",
        &[],
        &format!("{}; sleep 4", writes_its_id(&file)),
    );
    // A spawner to be late: the first run starts one (its own monitor is exec'd), and
    // no monitor is left waiting to take the next run instead.
    add_job(&dir, "first", &[], "true");
    json(&dir, &["run", "first", "--wait"]);
    wait_until("a spawner runs, and no monitor waits for a run", || {
        dir.spawner_pids().len() == 1 && dir.monitor_pids().is_empty()
    });
    let id = json(&dir, &["run", "late"])["id"].as_i64().unwrap();
    wait_until(
        "the server gave up on the spawner and exec'd a monitor",
        || dir.log().contains("starting this monitor by exec"),
    );
    // The exec'd monitor leaves as soon as it finds the run taken, and the server, seeing
    // it go, watches the forked one instead: then only the forked one is left, and the
    // run is still its own and running. (The log line above comes before the exec, so a
    // count of monitors alone could be read before the exec'd one exists.)
    wait_until("the server watches the monitor that marked the run", || {
        dir.log()
            .contains("watching the monitor that marked the run")
    });
    wait_until("the exec'd monitor has left", || {
        dir.monitor_pids().len() == 1
    });
    let run = run_of(&dir, id);
    assert_eq!(run["status"], "running", "{run}");
    assert_eq!(dir.monitor_pids(), [crate::harness::monitor_of(&run)]);
    let run = wait_status(&dir, id, "succeeded");
    assert_eq!(ran(&file), BTreeMap::from([(id, 1)]), "{run}");
    assert!(
        all_runs(&dir)
            .iter()
            .filter(|r| r["job"] == "late")
            .all(|r| r["id"] == id),
        "no other run: {run}"
    );
}
