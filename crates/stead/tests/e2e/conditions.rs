//! What a run needs of the machine: the network after a wake (a host in a network
//! namespace of the test's own, whose only link is down and brought up later), mains
//! power (a power-supply directory the test switches from battery to mains) and a sleep
//! inhibitor where none can be had (no logind here).

use std::net::TcpListener;
use std::path::Path;

use serde_json::Value;

use crate::harness::*;
use crate::netns::NetNs;

/// The first line a run's command wrote to `file` (a time in nanoseconds).
fn stamp_in(file: &Path) -> Option<i64> {
    std::fs::read_to_string(file).ok()?.trim().parse().ok()
}

/// A server in a namespace whose only link is down, and a job that needs the network,
/// checked by a TCP listener of the test's own across the link; a run of it started.
struct Cut {
    ns: NetNs,
    dir: StateDir,
    /// Kept listening for the run's check.
    _listener: TcpListener,
    stamp: std::path::PathBuf,
    run: i64,
}

fn cut_off(wait: &str) -> Cut {
    let ns = NetNs::create();
    let listener = TcpListener::bind((ns.host_ip.as_str(), 0)).unwrap();
    let check = listener.local_addr().unwrap().to_string();
    let mut dir = StateDir::new();
    dir.run_in_netns(&ns.name);
    let stamp = dir.root().join("started");
    add_job(
        &dir,
        "fetch",
        &[
            "--needs-network",
            "--network-check",
            &check,
            "--network-wait",
            wait,
        ],
        &format!("date +%s%N > {}", stamp.display()),
    );
    ns.link_down();
    let run = json(&dir, &["run", "fetch"])["id"].as_i64().unwrap();
    wait_until("the run waits for the network", || {
        log_of(&dir, run).contains("waiting for the network")
    });
    Cut {
        ns,
        dir,
        _listener: listener,
        stamp,
        run,
    }
}

#[test]
fn a_run_that_needs_the_network_starts_once_the_link_is_up_and_records_its_wait() {
    let cut = cut_off("2m");
    let waiting = run_of(&cut.dir, cut.run);
    assert_eq!(waiting["status"], "running", "{waiting}");
    assert_eq!(
        stamp_in(&cut.stamp),
        None,
        "the command started without the network"
    );
    let up = now_ns();
    cut.ns.link_up();
    let run = wait_status(&cut.dir, cut.run, "succeeded");
    let started = stamp_in(&cut.stamp).expect("the command ran");
    assert!(
        started >= up,
        "the command started before the link was up: {run}"
    );
    assert!(
        ms_of(run["started_at"].as_str().unwrap()) >= up / 1_000_000,
        "{run}"
    );
    let note = run["wait_note"].as_str().expect("the wait is recorded");
    assert!(
        note.starts_with("waited ") && note.ends_with(" for the network"),
        "{run}"
    );
    assert!(run["waited_ms"].as_u64().unwrap() > 0, "{run}");
    let shown = text(&cut.dir.run(&["show", &cut.run.to_string()]).stdout);
    assert!(shown.contains(note), "{shown}");
}

#[test]
fn a_run_whose_network_never_comes_goes_on_after_its_wait_and_says_so() {
    let cut = cut_off("2s");
    let run = wait_status(&cut.dir, cut.run, "succeeded");
    assert_eq!(
        run["wait_note"], "went on without network after 2s",
        "{run}"
    );
    assert!(run["waited_ms"].as_u64().unwrap() >= 2_000, "{run}");
    assert!(stamp_in(&cut.stamp).is_some(), "the command ran");
    assert!(log_of(&cut.dir, cut.run).contains("went on without network after 2s"));
}

/// A power-supply directory as sysfs lays it out: a mains adapter and a battery.
fn supplies(root: &Path, on_mains: bool) -> std::path::PathBuf {
    let dir = root.join("power_supply");
    for (name, files) in [
        (
            "AC",
            [
                ("type", "Mains"),
                ("online", if on_mains { "1" } else { "0" }),
            ],
        ),
        (
            "BAT0",
            [
                ("type", "Battery"),
                ("status", if on_mains { "Charging" } else { "Discharging" }),
            ],
        ),
    ] {
        std::fs::create_dir_all(dir.join(name)).unwrap();
        for (file, value) in files {
            std::fs::write(dir.join(name).join(file), format!("{value}\n")).unwrap();
        }
    }
    dir
}

fn on_battery(policy: &str) -> (StateDir, std::path::PathBuf) {
    let mut dir = StateDir::new();
    std::fs::create_dir_all(dir.root()).unwrap();
    let power = supplies(dir.root(), false);
    dir.set_env("STEAD_POWER_SUPPLIES", power.to_str().unwrap());
    let stamp = dir.root().join("started");
    add_job(
        &dir,
        "sync",
        &["--every", "1s", "--on-battery", policy],
        &format!("date +%s%N >> {}", stamp.display()),
    );
    (dir, stamp)
}

fn first_fire(dir: &StateDir) -> Option<Value> {
    runs_of(dir, "sync")
        .into_iter()
        .filter(|r| r["trigger"] == "scheduled" || r["trigger"] == "catch_up")
        .min_by_key(|r| r["id"].as_i64())
}

#[test]
fn a_fire_deferred_on_battery_runs_once_the_machine_is_on_mains() {
    let (dir, stamp) = on_battery("defer");
    wait_until("a fire is deferred", || {
        first_fire(&dir).is_some_and(|r| {
            log_of(&dir, r["id"].as_i64().unwrap()).contains("deferred: on battery power")
        })
    });
    let deferred = first_fire(&dir).unwrap();
    let id = deferred["id"].as_i64().unwrap();
    assert_eq!(deferred["status"], "running", "{deferred}");
    assert_eq!(stamp_in(&stamp), None, "a command ran on battery");
    let switched = now_ns();
    supplies(dir.root(), true);
    let run = wait_status(&dir, id, "succeeded");
    let started = stamp_in(&stamp).expect("the deferred fire ran");
    assert!(started >= switched, "it ran before the switch: {run}");
    let note = run["wait_note"].as_str().expect("the deferral is recorded");
    assert!(
        note.starts_with("deferred ") && note.ends_with(" on battery power"),
        "{run}"
    );
}

#[test]
fn a_fire_on_battery_under_skip_is_recorded_skipped_with_the_reason() {
    let (dir, stamp) = on_battery("skip");
    wait_until("a fire is skipped", || {
        first_fire(&dir).is_some_and(|r| r["status"] == "skipped")
    });
    let run = first_fire(&dir).unwrap();
    assert_eq!(
        run["reason"], "skipped: the machine is on battery power (on_battery = skip)",
        "{run}"
    );
    assert!(run["started_at"].is_null(), "{run}");
    assert_eq!(stamp_in(&stamp), None, "a command ran on battery");
    // A run asked for by hand is not a fire: it runs.
    let asked = json(&dir, &["run", "sync", "--wait"]);
    assert_eq!(asked["status"], "succeeded", "{asked}");
}

#[test]
fn keep_awake_without_logind_runs_and_the_log_and_doctor_say_so() {
    let dir = StateDir::new();
    add_job(&dir, "long", &["--keep-awake"], "echo working");
    let run = json(&dir, &["run", "long", "--wait"]);
    assert_eq!(run["status"], "succeeded", "{run}");
    let log = log_of(&dir, run["id"].as_i64().unwrap());
    assert!(log.contains("working"), "{log}");
    assert!(
        log.contains("no sleep inhibitor") && log.contains("the run goes on"),
        "{log}"
    );
    // Doctor says what such a run meets here: no inhibitor, and what to do about it.
    let check = doctor_check(&dir, "sleep_inhibitor");
    let summary = check["summary"].as_str().unwrap();
    assert!(
        summary.contains("keep_awake jobs go on") && summary.contains("may sleep under them"),
        "{check}"
    );
    assert!(
        check["fix"].as_str().is_some_and(|f| f.contains("logind")),
        "{check}"
    );
}

/// The delay each fire of `job` waits on the ledger: `not_before` minus `scheduled_at`,
/// in ms, for its first `n` fires.
fn jitters(dir: &StateDir, job: &str, n: usize) -> Vec<(Value, i64)> {
    let mut fires = Vec::new();
    wait_until(&format!("{n} fires of {job} are written"), || {
        fires = runs_of(dir, job)
            .into_iter()
            .filter(|r| r["trigger"] == "scheduled" && r["not_before"].is_string())
            .collect();
        fires.len() >= n
    });
    fires
        .into_iter()
        .take(n)
        .map(|r| {
            let delay = ms_of(r["not_before"].as_str().unwrap())
                - ms_of(r["scheduled_at"].as_str().unwrap());
            (r, delay)
        })
        .collect()
}

#[test]
fn a_fire_with_jitter_waits_on_the_ledger_and_a_fixed_one_waits_alike_each_time() {
    let dir = StateDir::new();
    let hour = 3_600_000;
    add_job(
        &dir,
        "fixed",
        &[
            "--every",
            "1s",
            "--concurrency",
            "allow",
            "--jitter",
            "1h",
            "--jitter-fixed",
        ],
        "true",
    );
    let fixed = jitters(&dir, "fixed", 2);
    for (run, delay) in &fixed {
        assert_eq!(run["status"], "queued", "{run}");
        assert!(
            run["waiting"]
                .as_str()
                .unwrap()
                .starts_with("its jitter, until "),
            "{run}"
        );
        assert!((0..=hour).contains(delay), "{run}");
    }
    assert_eq!(fixed[0].1, fixed[1].1, "a fixed jitter moved: {fixed:?}");
    add_job(
        &dir,
        "random",
        &["--every", "1s", "--concurrency", "allow", "--jitter", "1h"],
        "true",
    );
    let random = jitters(&dir, "random", 3);
    assert!(random.iter().all(|(_, d)| (0..=hour).contains(d)));
    assert!(
        random.iter().any(|(_, d)| *d != random[0].1),
        "three random jitters alike: {random:?}"
    );
}
