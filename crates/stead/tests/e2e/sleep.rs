//! Sleep is not a failure: what bounds a run's own work counts time the machine was
//! awake. A lid closed, as processes see it: the server, the run's monitor and its
//! command frozen (SIGSTOP), the wall clock moved on by hours (libfaketime), the
//! monotonic clock left as it is, then everything thawed.

use std::time::{Duration, Instant};

use crate::faketime::{FakeClock, Frozen, freeze_session};
use crate::harness::{add_job, json, ms_of, runs_of, text, wait_status, wait_until};

/// Closes the lid for `hours` of wall time on the state directory's server and on the
/// run whose monitor is `monitor`, does `during` while all is frozen, then opens it.
fn lid_closed(clock: &mut FakeClock, monitor: u32, hours: i64, during: impl FnOnce()) {
    let servers = clock.dir.server_pids();
    assert_eq!(servers.len(), 1, "one server");
    let _server = Frozen::freeze(servers[0]);
    let run = freeze_session(monitor);
    assert!(run.len() >= 2, "the monitor and its command are frozen");
    clock.advance(hours * 3600);
    during();
    // Thawed here, the monitor and its command first: the machine wakes.
}

#[test]
fn a_lid_closed_for_longer_than_a_runs_timeout_does_not_time_it_out() {
    let mut clock = FakeClock::new();
    add_job(
        &clock.dir,
        "writes",
        &["--timeout", "5s"],
        "sleep 2; echo written",
    );
    let id = json(&clock.dir, &["run", "writes"])["id"].as_i64().unwrap();
    let running = wait_status(&clock.dir, id, "running");
    let monitor = running["monitor_pid"].as_u64().unwrap() as u32;
    lid_closed(&mut clock, monitor, 2, || {});
    let ended = wait_status(&clock.dir, id, "succeeded");
    assert_eq!(ended["exit_code"], 0, "{ended}");
    assert!(ended["reason"].is_null(), "{ended}");
}

#[test]
fn a_run_past_its_timeout_while_awake_is_still_stopped() {
    let mut clock = FakeClock::new();
    add_job(&clock.dir, "hangs", &["--timeout", "2s"], "sleep 60");
    let id = json(&clock.dir, &["run", "hangs"])["id"].as_i64().unwrap();
    let running = wait_status(&clock.dir, id, "running");
    let started = Instant::now();
    let monitor = running["monitor_pid"].as_u64().unwrap() as u32;
    lid_closed(&mut clock, monitor, 2, || {});
    let ended = wait_status(&clock.dir, id, "failed");
    // Stopped once it had been awake 2 s, not at the wake.
    assert!(
        started.elapsed() >= Duration::from_millis(1_800),
        "stopped after {:?}",
        started.elapsed()
    );
    assert_eq!(ended["reason"], "timed out after 2s", "{ended}");
    wait_until("the run's command is gone", || {
        !std::path::Path::new(&format!("/proc/{monitor}")).exists()
            || clock.dir.monitor_pids().is_empty()
    });
}

/// The server lives through a sleep and puts it on the ledger: the run across it records
/// how long the machine slept, `stead sleeps` lists the sleep, and the fires it made
/// miss name it.
///
/// What a real suspend does to the clock since boot (Linux `CLOCK_BOOTTIME` grows by
/// the time asleep while `CLOCK_MONOTONIC` stands still) no test can do to a process:
/// libfaketime moves the wall clock (and would move both of the others alike), SIGSTOP
/// stops no clock, and a time namespace's offsets are fixed before its first process.
/// So the server reads the time asleep a test adds to that clock from the file
/// `STEAD_TEST_ASLEEP_FILE` names (`stead-server/src/tasks/sleeps.rs`); everything
/// else is real: the frozen processes, the wall clock moved by libfaketime, the awake
/// clock, the ledger.
#[test]
fn a_sleep_is_on_the_ledger_and_in_the_run_across_it() {
    let mut clock = FakeClock::new();
    let asleep = clock.dir.root().join("asleep-ms");
    std::fs::write(&asleep, "0").unwrap();
    clock
        .dir
        .set_env("STEAD_TEST_ASLEEP_FILE", asleep.to_str().unwrap());
    add_job(&clock.dir, "across", &[], "sleep 2; echo written");
    add_job(
        &clock.dir,
        "halfhourly",
        &["--cron", "*/30 * * * *", "--tz", "UTC"],
        "exit 0",
    );
    let id = json(&clock.dir, &["run", "across"])["id"].as_i64().unwrap();
    let running = wait_status(&clock.dir, id, "running");
    let monitor = running["monitor_pid"].as_u64().unwrap() as u32;
    lid_closed(&mut clock, monitor, 2, || {
        std::fs::write(&asleep, (2 * 3600 * 1000).to_string()).unwrap();
    });
    let ended = wait_status(&clock.dir, id, "succeeded");
    // The server reads its clocks one after the other: a preemption between two reads
    // can add a few milliseconds to what it measures.
    let two_hours: i64 = 2 * 3600 * 1000;
    let about = |ms: &serde_json::Value| (ms.as_i64().unwrap_or(0) - two_hours).abs() <= 50;
    assert!(about(&ended["slept_ms"]), "{ended}");

    let sleeps = json(&clock.dir, &["sleeps"]);
    let sleeps = sleeps.as_array().unwrap();
    assert_eq!(sleeps.len(), 1, "{sleeps:#?}");
    assert_eq!(sleeps[0]["duration_ms"], ended["slept_ms"], "{sleeps:#?}");
    assert!(sleeps[0]["wall_set_ms"].is_null(), "{sleeps:#?}");
    let (from, to) = (
        ms_of(sleeps[0]["started_at"].as_str().unwrap()),
        ms_of(sleeps[0]["ended_at"].as_str().unwrap()),
    );
    assert_eq!(serde_json::json!(to - from), ended["slept_ms"]);

    // The half-hourly fires slept through: one caught up, the rest recorded skipped,
    // each naming the sleep.
    let mut skipped = Vec::new();
    wait_until("the fires slept through are recorded", || {
        skipped = runs_of(&clock.dir, "halfhourly")
            .into_iter()
            .filter(|r| r["status"] == "skipped")
            .collect();
        !skipped.is_empty()
    });
    for row in &skipped {
        let reason = row["reason"].as_str().unwrap();
        assert!(
            reason.contains("missed while the machine slept"),
            "{reason}"
        );
        let at = ms_of(row["scheduled_at"].as_str().unwrap());
        assert!(from <= at && at <= to, "{row}");
    }
    assert!(
        text(&clock.dir.run(&["show", &id.to_string()]).stdout).contains("slept            "),
        "show names the sleep"
    );

    // The one caught up names the sleep too, in its row and in `show`.
    let mut caught_up = serde_json::Value::Null;
    wait_until("the catch-up run is recorded", || {
        caught_up = runs_of(&clock.dir, "halfhourly")
            .into_iter()
            .find(|r| r["trigger"] == "catch_up" && r["status"] != "skipped")
            .unwrap_or_default();
        !caught_up.is_null()
    });
    let why = caught_up["caught_up"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(
        why.starts_with("missed while the machine slept "),
        "{caught_up}"
    );
    let at = ms_of(caught_up["scheduled_at"].as_str().unwrap());
    assert!(from <= at && at <= to, "{caught_up}");
    let shown = text(
        &clock
            .dir
            .run(&["show", &caught_up["id"].to_string()])
            .stdout,
    );
    assert!(shown.contains(&why), "{shown}");
    // A run not caught up, and a fire recorded skipped (its reason says it), carry none.
    assert!(ended.get("caught_up").is_none(), "{ended}");
    assert!(
        skipped.iter().all(|r| r.get("caught_up").is_none()),
        "{skipped:#?}"
    );
}
