//! Every fire accounted for: a sleep of the whole system across the fires of a minutely
//! job, made with libfaketime (the server's wall clock jumps while it is frozen), leaves
//! one ledger row per (job, scheduled time): the catch-up run and a `skipped` row for
//! each fire not run, naming why.

use std::time::Duration;

use serde_json::Value;

use stead_store::postgres::scratch::ScratchDb;

use crate::api::Api;
use crate::faketime::{FakeClock, Frozen};
use crate::harness::{
    StateDir, add_job, fire_times, json, ms_of, now_ms, runs_of, wait_until, wait_until_within,
};

const MINUTE_MS: i64 = 60_000;

/// The job's rows once the ledger has one for the first fire and each of the 30 slept
/// through.
fn thirty_one_rows(dir: &StateDir) -> Vec<Value> {
    let mut runs = Vec::new();
    wait_until_within(
        "the ledger accounts for every fire slept through",
        Duration::from_secs(30),
        || {
            runs = runs_of(dir, "tick");
            runs.len() >= 31
        },
    );
    runs
}

/// A minutely job (with `extra` options) that has run once on time, then the whole
/// system asleep across 30 of its fires: returns the clock and the first fire's time.
fn sleep_across_thirty_fires(extra: &[&str]) -> (FakeClock, i64) {
    sleep_across_thirty_fires_on(FakeClock::new(), extra)
}

fn sleep_across_thirty_fires_on(mut clock: FakeClock, extra: &[&str]) -> (FakeClock, i64) {
    // The job is created half a minute before a minute starts (no job yet: no fire is
    // jumped over), then its first fire is brought to 3 s away: it comes soon, on time.
    let now = clock.now_ms();
    let first = (now / MINUTE_MS + 2) * MINUTE_MS;
    clock.advance((first - 30_000 - now) / 1_000);
    let mut args = vec!["--cron", "* * * * *"];
    args.extend_from_slice(extra);
    add_job(&clock.dir, "tick", &args, "true");
    let created = clock.now_ms();
    assert!(created < first - 5_000, "the job was added in time");
    clock.advance((first - 3_000 - created) / 1_000);
    wait_until_within("the first fire runs", Duration::from_secs(40), || {
        runs_of(&clock.dir, "tick")
            .iter()
            .any(|r| r["status"] == "succeeded")
    });
    let runs = runs_of(&clock.dir, "tick");
    assert_eq!(runs.len(), 1, "{runs:?}");
    assert_eq!(runs[0]["trigger"], "scheduled");
    assert_eq!(ms_of(runs[0]["scheduled_at"].as_str().unwrap()), first);
    // Sleep late enough in the minute that the 30th fire is found well past the 5 s a
    // fire waited for may be late.
    wait_until("the first fire is 8 s old", || {
        clock.now_ms() > first + 8_000
    });
    let pids = clock.dir.server_pids();
    assert_eq!(pids.len(), 1, "one server");
    {
        let _frozen = Frozen::freeze(pids[0]);
        clock.advance(30 * 60);
        // Thawed here: the machine wakes 30 minutes later.
    }
    (clock, first)
}

/// Fire times recorded for the job, with no time twice.
#[test]
fn a_sleep_across_thirty_fires_leaves_one_catch_up_and_twenty_nine_rows_naming_it() {
    // `once` is the default catch-up policy.
    let (clock, first) = sleep_across_thirty_fires(&[]);
    one_catch_up_and_twenty_nine_rows_naming_it(&clock, first);
}

fn one_catch_up_and_twenty_nine_rows_naming_it(clock: &FakeClock, first: i64) {
    let dir = &clock.dir;
    let runs = thirty_one_rows(dir);
    let catch_ups: Vec<&Value> = runs
        .iter()
        .filter(|r| r["trigger"] == "catch_up" && r["status"] != "skipped")
        .collect();
    assert_eq!(catch_ups.len(), 1, "{runs:?}");
    let catch_up = catch_ups[0];
    let id = catch_up["id"].as_i64().unwrap();
    assert_eq!(
        ms_of(catch_up["scheduled_at"].as_str().unwrap()),
        first + 30 * MINUTE_MS,
        "the catch-up is for the latest fire"
    );
    let skipped: Vec<&Value> = runs.iter().filter(|r| r["status"] == "skipped").collect();
    assert_eq!(skipped.len(), 29, "{runs:?}");
    let naming = format!("fire not run: coalesced into catch-up run {id} (catch_up = once)");
    for row in &skipped {
        assert_eq!(row["trigger"], "catch_up", "{row}");
        assert_eq!(row["reason"], naming.as_str(), "{row}");
    }
    // One row per fire: the first, the 29 coalesced, the catch-up, nothing else.
    assert_eq!(runs.len(), 31, "{runs:?}");
    let expected: Vec<i64> = (0..=30).map(|k| first + k * MINUTE_MS).collect();
    assert_eq!(fire_times(&runs), expected);

    // `--no-skipped` hides them.
    let shown = json(
        dir,
        &["runs", "--job", "tick", "--no-skipped", "--limit", "1000"],
    );
    let shown = shown.as_array().unwrap();
    assert_eq!(shown.len(), 2, "{shown:?}");
    assert!(shown.iter().all(|r| r["status"] != "skipped"));
    // Logged once the admission that wrote the rows has returned, a moment after they
    // could be read.
    wait_until("the server logs the fires not run", || {
        dir.log().contains("fires not run recorded skipped")
    });
}

#[test]
fn a_sleep_across_thirty_fires_with_catch_up_skip_leaves_thirty_skipped_rows() {
    let (clock, first) = sleep_across_thirty_fires(&["--catch-up", "skip"]);
    let dir = &clock.dir;
    let runs = thirty_one_rows(dir);
    assert_eq!(runs.len(), 31, "{runs:?}");
    let skipped: Vec<&Value> = runs.iter().filter(|r| r["status"] == "skipped").collect();
    assert_eq!(skipped.len(), 30, "none of them ran: {runs:?}");
    for row in &skipped {
        assert_eq!(row["trigger"], "catch_up", "{row}");
        assert_eq!(
            row["reason"],
            "fire not run: missed while stead was not running or the machine slept (catch_up = skip)",
            "{row}"
        );
    }
    let expected: Vec<i64> = (0..=30).map(|k| first + k * MINUTE_MS).collect();
    assert_eq!(fire_times(&runs), expected);
}

#[test]
fn a_restart_across_fires_accounts_for_each_of_them_once() {
    restart_across_fires(StateDir::new());
}

#[test]
fn the_leader_of_a_postgresql_ledger_accounts_for_a_restart_alike() {
    // One host on a shared ledger: it leads, and its fires (the skipped rows among them)
    // are fenced by its leader epoch. (Its clock follows the database's, so a host's
    // sleep is time passing for the ledger: the same missed fires, on waking or for
    // whichever host leads meanwhile.)
    let db = ScratchDb::create();
    let mut dir = StateDir::new();
    dir.set_env("STEAD_STORE_URL", &db.url);
    restart_across_fires(dir);
}

fn restart_across_fires(dir: StateDir) {
    add_job(&dir, "tick", &["--every", "1s"], "true");
    wait_until("a scheduled run", || !runs_of(&dir, "tick").is_empty());
    assert!(dir.run(&["stop"]).status.success());
    let stopped_at = now_ms();
    wait_until("four fire times pass while stopped", || {
        now_ms() > stopped_at + 4_500
    });
    dir.status();
    let mut runs = Vec::new();
    wait_until("a catch-up run and the fires it coalesced", || {
        runs = runs_of(&dir, "tick");
        runs.iter()
            .any(|r| r["trigger"] == "catch_up" && r["status"] != "skipped")
    });
    let catch_up = runs
        .iter()
        .find(|r| r["trigger"] == "catch_up" && r["status"] != "skipped")
        .unwrap();
    let id = catch_up["id"].as_i64().unwrap();
    let coalesced = runs
        .iter()
        .filter(|r| {
            r["reason"]
                == format!("fire not run: coalesced into catch-up run {id} (catch_up = once)")
                    .as_str()
        })
        .count();
    assert!(coalesced >= 3, "{runs:?}");
    // Every second from the first fire to the last is on the ledger, once.
    let times = fire_times(&runs);
    for pair in times.windows(2) {
        assert_eq!(pair[1] - pair[0], 1_000, "a fire is missing: {runs:?}");
    }

    // The HTTP API hides them too, with the same parameter.
    let api = Api::start(&dir);
    let all = api.get("/api/runs?job=tick&limit=1000").json();
    assert!(
        all.as_array()
            .unwrap()
            .iter()
            .any(|r| r["status"] == "skipped")
    );
    let shown = api
        .get("/api/runs?job=tick&limit=1000&no_skipped=true")
        .json();
    let shown = shown.as_array().unwrap();
    assert!(shown.iter().all(|r| r["status"] != "skipped"), "{shown:?}");
    assert!(shown.iter().any(|r| r["id"] == id), "{shown:?}");
}
