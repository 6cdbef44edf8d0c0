//! Cut runs are owed, not failed: interruption, resume once with the trigger kept,
//! receipts, machine ownership and catch-up, end to end with real processes.

use serde_json::Value;

use crate::harness::*;

/// A script that blocks on its first attempt (so a test can cut it) and exits 0 after.
fn blocks_first(dir: &StateDir, tag: &str) -> String {
    format!(
        "if [ \"$STEAD_ATTEMPT\" = 1 ]; then touch {}; while :; do sleep 0.05; done; fi; echo resumed",
        dir.path().join(format!("{tag}.started")).display()
    )
}

fn started(dir: &StateDir, tag: &str) -> bool {
    dir.path().join(format!("{tag}.started")).exists()
}

fn dir_resuming_at_once() -> StateDir {
    let mut dir = StateDir::new();
    dir.set_env("STEAD_RESUME_DELAY_MS", "0");
    dir
}

fn wait_resolved(dir: &StateDir, id: i64) -> Value {
    let mut run = Value::Null;
    wait_until(&format!("run {id} is resolved"), || {
        run = run_of(dir, id);
        run["resolution"].is_string()
    });
    run
}

fn passes(dir: &StateDir) -> usize {
    dir.log()
        .matches("settled the runs owed after a cut")
        .count()
}

#[test]
fn a_run_whose_monitor_dies_is_interrupted_and_resumed_once_with_its_trigger_and_key() {
    let dir = dir_resuming_at_once();
    let hook = dir.path().join("hook-ran");
    add_job(
        &dir,
        "journal",
        &["--on-failure", &format!("touch {}", hook.display())],
        &blocks_first(&dir, "journal"),
    );
    let id = json(&dir, &["run", "journal"])["id"].as_i64().unwrap();
    wait_until("the first attempt started", || started(&dir, "journal"));
    kill_monitor_and_group(monitor_of(&wait_status(&dir, id, "running")));

    let cut = wait_status(&dir, id, "interrupted");
    assert!(cut["reason"].as_str().unwrap().contains("monitor"), "{cut}");
    let cut = wait_resolved(&dir, id);
    let resumed = children_of(&dir, "journal", id);
    assert_eq!(resumed.len(), 1, "{resumed:?}");
    let resumed = wait_status(&dir, resumed[0]["id"].as_i64().unwrap(), "succeeded");
    assert_eq!(resumed["trigger"], "resume");
    assert_eq!(resumed["original_trigger"], "on_demand");
    assert_eq!(resumed["idempotency_key"], cut["idempotency_key"]);
    assert_eq!(resumed["attempt"], 2);
    assert_eq!(
        cut["resolution"],
        format!("resumed as run {}", resumed["id"])
    );
    assert!(!hook.exists(), "the failure hook ran for a cut run");
}

#[test]
fn a_run_whose_monitor_dies_before_recording_its_cancel_ends_cancelled_and_is_not_owed() {
    let dir = dir_resuming_at_once();
    add_job(&dir, "journal", &[], &blocks_first(&dir, "journal"));
    let id = json(&dir, &["run", "journal"])["id"].as_i64().unwrap();
    wait_until("the first attempt started", || started(&dir, "journal"));
    let monitor = monitor_of(&wait_status(&dir, id, "running"));
    // Frozen, the monitor cannot act on the cancel its server sends it; killed, it never
    // will: the cancel was asked for all the same.
    signal(monitor, libc::SIGSTOP);
    let asked = dir.run(&["cancel", &id.to_string()]);
    kill_monitor_and_group(monitor);
    let run = wait_status(&dir, id, "cancelled");
    let asked = String::from_utf8_lossy(&asked.stderr);
    let reason = run["reason"].as_str().unwrap_or_default();
    assert!(
        reason.starts_with("cancelled: its monitor"),
        "{run}\n{asked}"
    );
    assert!(run["resolution"].is_null(), "{run}");
}

#[test]
fn a_resume_that_is_cut_too_is_not_resumed_again() {
    let dir = dir_resuming_at_once();
    let script = format!(
        "touch {}/attempt-$STEAD_ATTEMPT; while :; do sleep 0.05; done",
        dir.path().display()
    );
    add_job(&dir, "stubborn", &[], &script);
    let id = json(&dir, &["run", "stubborn"])["id"].as_i64().unwrap();
    wait_until("attempt 1 started", || {
        dir.path().join("attempt-1").exists()
    });
    kill_monitor_and_group(monitor_of(&wait_status(&dir, id, "running")));
    wait_resolved(&dir, id);
    let resume = children_of(&dir, "stubborn", id)[0]["id"].as_i64().unwrap();
    wait_until("attempt 2 started", || {
        dir.path().join("attempt-2").exists()
    });
    kill_monitor_and_group(monitor_of(&wait_status(&dir, resume, "running")));
    let again = wait_resolved(&dir, resume);
    assert_eq!(
        again["resolution"],
        "not resumed: it was itself a resume, and a cut run is resumed once"
    );
    assert_eq!(runs_of(&dir, "stubborn").len(), 2);
}

#[test]
fn receipts_close_landed_runs_and_resume_the_rest() {
    let dir = StateDir::new();
    let keys = dir.path().join("keys");
    for (name, code) in [("landed", 0), ("not-landed", 1), ("check-crashed", 3)] {
        let check = format!(
            "echo \"$STEAD_IDEMPOTENCY_KEY\" >> {}; exit {code}",
            keys.display()
        );
        add_job(
            &dir,
            name,
            &["--landed-check", &check],
            &blocks_first(&dir, name),
        );
    }
    let ids: Vec<i64> = ["landed", "not-landed", "check-crashed"]
        .iter()
        .map(|name| json(&dir, &["run", name])["id"].as_i64().unwrap())
        .collect();
    for name in ["landed", "not-landed", "check-crashed"] {
        wait_until("first attempts started", || started(&dir, name));
    }
    // A stop that cuts the runs: they are owed, and the next server settles them.
    let out = dir.run(&["stop", "--cancel-runs"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    for id in &ids {
        let run = run_of(&dir, *id);
        assert_eq!(run["status"], "interrupted");
        assert_eq!(
            run["reason"],
            "interrupted: stead was stopped with --cancel-runs"
        );
    }

    let landed = wait_resolved(&dir, ids[0]);
    assert_eq!(landed["status"], "succeeded", "{landed}");
    assert_eq!(landed["reason"], "landed, proven by receipt");
    assert!(children_of(&dir, "landed", ids[0]).is_empty());

    let not_landed = wait_resolved(&dir, ids[1]);
    let resumed = children_of(&dir, "not-landed", ids[1]);
    assert_eq!(resumed.len(), 1);
    assert_eq!(
        not_landed["resolution"],
        format!(
            "resumed as run {} (its receipt says the work did not land)",
            resumed[0]["id"]
        )
    );

    let crashed = wait_resolved(&dir, ids[2]);
    assert_eq!(children_of(&dir, "check-crashed", ids[2]).len(), 1);
    let why = crashed["resolution"].as_str().unwrap();
    assert!(why.contains("the landed check exited with code 3"), "{why}");
    assert!(why.contains("a duplicate is the lesser loss"), "{why}");

    let seen = std::fs::read_to_string(&keys).unwrap();
    for id in &ids {
        let key = run_of(&dir, *id)["idempotency_key"]
            .as_str()
            .unwrap()
            .to_string();
        assert!(seen.contains(&key), "the check did not get {key}: {seen}");
    }
}

#[test]
fn removed_and_disabled_jobs_are_not_resumed_but_an_on_demand_run_is() {
    let mut dir = dir_resuming_at_once();
    add_job(&dir, "gone", &[], &blocks_first(&dir, "gone"));
    add_job(
        &dir,
        "paused",
        &["--every", "1s"],
        &blocks_first(&dir, "paused"),
    );
    add_job(
        &dir,
        "paused-by-hand",
        &[],
        &blocks_first(&dir, "paused-by-hand"),
    );
    let gone = json(&dir, &["run", "gone"])["id"].as_i64().unwrap();
    let by_hand = json(&dir, &["run", "paused-by-hand"])["id"]
        .as_i64()
        .unwrap();
    for tag in ["gone", "paused", "paused-by-hand"] {
        wait_until("first attempts started", || started(&dir, tag));
    }
    let scheduled = runs_of(&dir, "paused")
        .into_iter()
        .find(|r| r["trigger"] == "scheduled" && r["status"] == "running")
        .unwrap()["id"]
        .as_i64()
        .unwrap();
    assert!(dir.run(&["stop", "--cancel-runs"]).status.success());

    // Change the jobs under a server that will not resume anything yet.
    dir.set_env("STEAD_RESUME_DELAY_MS", "600000");
    json(&dir, &["job", "rm", "gone"]);
    json(&dir, &["job", "disable", "paused"]);
    json(&dir, &["job", "disable", "paused-by-hand"]);
    assert!(dir.run(&["stop"]).status.success());

    dir.set_env("STEAD_RESUME_DELAY_MS", "0");
    dir.status();
    assert_eq!(
        wait_resolved(&dir, gone)["resolution"],
        "not resumed: its job was removed"
    );
    assert_eq!(
        wait_resolved(&dir, scheduled)["resolution"],
        "not resumed: its job is disabled"
    );
    let resumed = wait_resolved(&dir, by_hand);
    assert!(
        resumed["resolution"]
            .as_str()
            .unwrap()
            .starts_with("resumed as run"),
        "{resumed}"
    );
}

#[test]
fn a_run_older_than_the_resume_age_is_history() {
    let mut dir = dir_resuming_at_once();
    add_job(&dir, "old", &[], &blocks_first(&dir, "old"));
    let id = json(&dir, &["run", "old"])["id"].as_i64().unwrap();
    wait_until("it started", || started(&dir, "old"));
    assert!(dir.run(&["stop", "--cancel-runs"]).status.success());
    dir.set_env("STEAD_RESUME_MAX_AGE_MS", "1");
    dir.status();
    let run = wait_resolved(&dir, id);
    assert!(
        run["resolution"]
            .as_str()
            .unwrap()
            .starts_with("not resumed: it is older than the resume age"),
        "{run}"
    );
    assert!(children_of(&dir, "old", id).is_empty());
}

#[test]
fn a_ledger_opened_on_another_machine_resumes_none_of_the_first_ones_runs() {
    let mut dir = dir_resuming_at_once();
    dir.set_env("STEAD_MACHINE_ID", "home-laptop");
    add_job(&dir, "brief", &[], &blocks_first(&dir, "brief"));
    let id = json(&dir, &["run", "brief"])["id"].as_i64().unwrap();
    assert_eq!(run_of(&dir, id)["machine_id"], "home-laptop");
    wait_until("it started", || started(&dir, "brief"));
    assert!(dir.run(&["stop", "--cancel-runs"]).status.success());

    // The state directory travels to another machine, which boots twice.
    dir.set_env("STEAD_MACHINE_ID", "cloud-box");
    for boot in 1..=2 {
        dir.status();
        wait_until("the boot's resume pass ran", || passes(&dir) >= boot);
        let run = run_of(&dir, id);
        assert_eq!(run["resolution"], Value::Null, "boot {boot}: {run}");
        assert!(children_of(&dir, "brief", id).is_empty());
        assert!(dir.run(&["stop"]).status.success());
    }

    // Back home, the debt is paid once.
    dir.set_env("STEAD_MACHINE_ID", "home-laptop");
    dir.status();
    wait_resolved(&dir, id);
    let resumed = children_of(&dir, "brief", id);
    assert_eq!(resumed.len(), 1);
    assert_eq!(resumed[0]["machine_id"], "home-laptop");
}

#[test]
fn two_quick_boots_resume_a_run_once() {
    let dir = dir_resuming_at_once();
    add_job(&dir, "once", &[], &blocks_first(&dir, "once"));
    let id = json(&dir, &["run", "once"])["id"].as_i64().unwrap();
    wait_until("it started", || started(&dir, "once"));
    assert!(dir.run(&["stop", "--cancel-runs"]).status.success());
    for _ in 0..3 {
        let status = dir.status();
        signal(status["pid"].as_u64().unwrap() as u32, libc::SIGKILL);
        wait_until("the server is gone", || dir.server_pids().is_empty());
    }
    dir.status();
    wait_resolved(&dir, id);
    wait_until("no second resume appears", || passes(&dir) >= 1);
    assert_eq!(children_of(&dir, "once", id).len(), 1);
}

fn catch_ups(dir: &StateDir, job: &str) -> Vec<Value> {
    runs_of(dir, job)
        .into_iter()
        .filter(|r| r["trigger"] == "catch_up")
        .collect()
}

fn scheduled_times(dir: &StateDir, job: &str) -> Vec<String> {
    runs_of(dir, job)
        .iter()
        .map(|r| r["scheduled_at"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn a_short_stop_across_fire_times_makes_them_up_once() {
    let dir = StateDir::new();
    add_job(&dir, "tick", &["--every", "1s"], "true");
    wait_until("a scheduled run", || !runs_of(&dir, "tick").is_empty());
    assert!(dir.run(&["stop"]).status.success());
    let stopped_at = now_ms();
    wait_until("three fire times pass while stopped", || {
        now_ms() > stopped_at + 3_500
    });
    dir.status();
    wait_until("a catch-up run", || !catch_ups(&dir, "tick").is_empty());
    let before = runs_of(&dir, "tick").len();
    wait_until("scheduling goes on", || {
        runs_of(&dir, "tick").len() > before
    });
    // One catch-up run; the fires coalesced into it are skipped rows that name it.
    let (caught, coalesced): (Vec<Value>, Vec<Value>) = catch_ups(&dir, "tick")
        .into_iter()
        .partition(|r| r["status"] != "skipped");
    assert_eq!(caught.len(), 1, "{caught:?}");
    let naming = format!(
        "fire not run: coalesced into catch-up run {} (catch_up = once)",
        caught[0]["id"]
    );
    assert!(
        coalesced.iter().all(|r| r["reason"] == naming.as_str()),
        "{coalesced:?}"
    );
    let at = ms_of(caught[0]["scheduled_at"].as_str().unwrap());
    assert!(
        at > stopped_at,
        "the catch-up is for a fire missed while stopped"
    );
    let mut times = scheduled_times(&dir, "tick");
    let n = times.len();
    times.sort();
    times.dedup();
    assert_eq!(times.len(), n, "a fire was recorded twice");
}

#[test]
fn a_crash_across_fires_with_catch_up_all_runs_each_once() {
    let dir = StateDir::new();
    add_job(
        &dir,
        "each",
        &["--every", "1s", "--catch-up", "all"],
        "true",
    );
    wait_until("a scheduled run", || !runs_of(&dir, "each").is_empty());
    let status = dir.status();
    signal(status["pid"].as_u64().unwrap() as u32, libc::SIGKILL);
    let crashed_at = now_ms();
    wait_until("fire times pass while down", || {
        now_ms() > crashed_at + 3_500
    });
    dir.status();
    wait_until("each missed fire ran", || {
        catch_ups(&dir, "each")
            .iter()
            .filter(|r| r["status"] == "succeeded")
            .count()
            >= 3
    });
    assert!(
        catch_ups(&dir, "each")
            .iter()
            .all(|r| r["status"] != "skipped"),
        "a missed fire was skipped instead of run: {:?}",
        catch_ups(&dir, "each")
    );
    let mut times = scheduled_times(&dir, "each");
    let n = times.len();
    times.sort();
    times.dedup();
    assert_eq!(times.len(), n, "a fire was recorded twice");
    for run in catch_ups(&dir, "each") {
        let at = ms_of(run["scheduled_at"].as_str().unwrap());
        assert!(at > crashed_at - 1_000, "{run}");
    }
}

#[test]
fn alternatives_run_after_a_genuine_failure_and_the_hook_gets_the_final_run() {
    let dir = StateDir::new();
    add_job(
        &dir,
        "brains",
        &["--alternative", "echo second brain; exit 0"],
        "echo first brain; exit 1",
    );
    let run = json(&dir, &["run", "brains", "--wait"]);
    assert_eq!(run["status"], "succeeded", "{run}");
    assert!(
        run["reason"].as_str().unwrap().contains("alternative 1"),
        "{run}"
    );
    let log = std::fs::read_to_string(run["log_path"].as_str().unwrap()).unwrap();
    assert!(
        log.contains("first brain") && log.contains("second brain"),
        "{log}"
    );

    let seen = dir.path().join("hook-input.json");
    let marker = format!("30003{}", std::process::id());
    add_job(
        &dir,
        "broken",
        &[
            "--on-failure",
            &format!("cat > {}; sleep {marker}", seen.display()),
        ],
        "exit 2",
    );
    // The waiter hears of the failure at once, while the (slow) hook still runs.
    let out = dir.run(&["run", "broken", "--wait", "--json"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    let failed: Value = serde_json::from_slice(&out.stdout).unwrap();
    wait_until("the hook runs", || processes_with(&marker) == 1);
    wait_until("the hook wrote its input", || {
        std::fs::read_to_string(&seen).is_ok_and(|s| s.ends_with('}'))
    });
    let input: Value = serde_json::from_str(&std::fs::read_to_string(&seen).unwrap()).unwrap();
    assert_eq!(input["id"], failed["id"]);
    assert_eq!(input["status"], "failed");
    assert_eq!(input["exit_code"], 2);
}

#[test]
fn a_resume_waits_for_an_overlapping_run_instead_of_being_skipped() {
    let mut dir = StateDir::new();
    let gate = dir.path().join("gate");
    let script = format!(
        "if [ \"$STEAD_ATTEMPT\" = 1 ]; then touch {dir}/started-$STEAD_RUN_ID; while [ ! -e {gate} ]; do sleep 0.05; done; fi",
        dir = dir.path().display(),
        gate = gate.display()
    );
    add_job(&dir, "single", &[], &script);
    let cut = json(&dir, &["run", "single"])["id"].as_i64().unwrap();
    wait_until("the first run started", || {
        dir.path().join(format!("started-{cut}")).exists()
    });
    assert!(dir.run(&["stop", "--cancel-runs"]).status.success());

    // The next server resumes after a short delay; a new run of the job gets in first.
    dir.set_env("STEAD_RESUME_DELAY_MS", "1000");
    let other = json(&dir, &["run", "single"])["id"].as_i64().unwrap();
    wait_status(&dir, other, "running");
    wait_until("the resume pass ran", || passes(&dir) >= 1);
    let owed = run_of(&dir, cut);
    assert_eq!(owed["resolution"], Value::Null, "{owed}");
    assert!(children_of(&dir, "single", cut).is_empty());

    std::fs::write(&gate, b"").unwrap();
    wait_status(&dir, other, "succeeded");
    let settled = wait_resolved(&dir, cut);
    let resumed = children_of(&dir, "single", cut);
    assert_eq!(resumed.len(), 1, "{resumed:?}");
    assert_eq!(
        settled["resolution"],
        format!("resumed as run {}", resumed[0]["id"])
    );
    wait_status(&dir, resumed[0]["id"].as_i64().unwrap(), "succeeded");
}
