//! Retries with backoff, end to end: a genuine failure is followed by a new run (trigger
//! `retry`, the same key, the next attempt) once its delay has passed, written with the
//! failure so that a crash in between loses nothing; a cut run is resumed, never retried;
//! the failure hook waits for the last attempt.

use serde_json::Value;

use crate::harness::*;

/// The run of `job` with id `id` among `runs`.
fn by_id(runs: &[Value], id: i64) -> &Value {
    runs.iter()
        .find(|r| r["id"] == id)
        .unwrap_or_else(|| panic!("no run {id} in {runs:?}"))
}

/// Waits until every monitor of the directory has exited: each one runs the failure hook,
/// if any, before it does.
fn wait_monitors_gone(dir: &StateDir) {
    wait_until("every monitor has exited", || dir.monitor_pids().is_empty());
}

#[test]
fn a_job_failing_twice_then_succeeding_leaves_three_linked_attempts_under_one_key_and_no_hook() {
    let dir = StateDir::new();
    let hook = dir.root().join("hook-ran");
    add_job(
        &dir,
        "flaky",
        &[
            "--retries",
            "3",
            "--retry-delay",
            "200ms",
            "--on-failure",
            &format!("cat >> {}", hook.display()),
        ],
        "echo attempt $STEAD_ATTEMPT; [ \"$STEAD_ATTEMPT\" -ge 3 ]",
    );
    // `--wait` follows the run through its retries and exits as the last attempt did.
    let out = dir.run(&["run", "flaky", "--wait", "--json"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let last: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(last["status"], "succeeded", "{last}");
    assert_eq!(last["attempt"], 3, "{last}");

    let runs = runs_of(&dir, "flaky");
    assert_eq!(runs.len(), 3, "{runs:#?}");
    let first = by_id(&runs, runs[2]["id"].as_i64().unwrap());
    let second = by_id(
        &runs,
        first["followed_by"].as_i64().expect("a retry follows"),
    );
    let third = by_id(
        &runs,
        second["followed_by"].as_i64().expect("a retry follows"),
    );
    assert_eq!(third["id"], last["id"]);
    let chain = [first, second, third];
    assert_eq!(
        chain.map(|r| (
            r["trigger"].clone(),
            r["status"].clone(),
            r["attempt"].clone()
        )),
        [
            ("on_demand".into(), "failed".into(), 1.into()),
            ("retry".into(), "failed".into(), 2.into()),
            ("retry".into(), "succeeded".into(), 3.into()),
        ]
    );
    assert_eq!(second["parent_id"], first["id"]);
    assert_eq!(third["parent_id"], second["id"]);
    assert!(third["followed_by"].is_null(), "{third}");
    for run in chain {
        assert_eq!(run["idempotency_key"], first["idempotency_key"], "{run}");
    }
    // Each retry waited out its delay (200 ms, then 400 ms, less at most 20 % jitter)
    // from the end of the attempt before it.
    for (before, retry, delay) in [(first, second, 200), (second, third, 400)] {
        let waited = ms_of(retry["started_at"].as_str().unwrap())
            - ms_of(before["ended_at"].as_str().unwrap());
        assert!(
            waited >= delay * 80 / 100,
            "retry {retry} started {waited} ms after {before}"
        );
    }
    // The failure hook is for the last attempt, and the last one succeeded.
    wait_monitors_gone(&dir);
    assert!(
        !hook.exists(),
        "the hook ran: {:?}",
        std::fs::read_to_string(&hook)
    );
    let log = text(&dir.run(&["logs", &first["id"].to_string()]).stdout);
    assert!(
        log.contains("not running the failure hook: retry 1 of 3 follows"),
        "{log}"
    );
}

#[test]
fn a_job_that_always_fails_runs_its_hook_once_after_the_last_attempt() {
    let dir = StateDir::new();
    let hook = dir.root().join("hook-input");
    add_job(
        &dir,
        "broken",
        &[
            "--retries",
            "2",
            "--retry-delay",
            "100ms",
            "--on-failure",
            // One line per run of the hook: the run it was given.
            &format!("cat >> {0}; echo >> {0}", hook.display()),
        ],
        "echo nope; exit 4",
    );
    let out = dir.run(&["run", "broken", "--wait"]);
    assert_eq!(out.status.code(), Some(4), "{}", text(&out.stdout));
    let said = text(&out.stdout);
    assert!(said.contains("(retry, attempt 3): failed"), "{said}");

    wait_until("the hook has run", || hook.exists());
    wait_monitors_gone(&dir);
    let runs = runs_of(&dir, "broken");
    assert_eq!(runs.len(), 3, "{runs:#?}");
    assert!(runs.iter().all(|r| r["status"] == "failed"), "{runs:#?}");
    let lines: Vec<Value> = std::fs::read_to_string(&hook)
        .unwrap()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 1, "the hook ran more than once: {lines:#?}");
    assert_eq!(
        lines[0]["id"], runs[0]["id"],
        "the hook got the last attempt"
    );
    assert_eq!(lines[0]["attempt"], 3);
}

#[test]
fn a_retry_pending_while_the_server_is_sigkilled_still_runs_once() {
    let dir = StateDir::new();
    add_job(
        &dir,
        "sync",
        &["--retries", "1", "--retry-delay", "2s"],
        "[ \"$STEAD_ATTEMPT\" -ge 2 ] && echo synced",
    );
    let first = json(&dir, &["run", "sync"])["id"].as_i64().unwrap();
    let failed = wait_status(&dir, first, "failed");
    let retry_id = failed["followed_by"]
        .as_i64()
        .expect("the retry is written with the failure");
    let retry = run_of(&dir, retry_id);
    assert_eq!(retry["status"], "queued");
    assert!(
        retry["waiting"]
            .as_str()
            .unwrap()
            .contains("its retry delay"),
        "{retry}"
    );
    let not_before = ms_of(retry["not_before"].as_str().unwrap());

    // A crash of the server while the retry waits, and no server until its time is past.
    let pids = dir.server_pids();
    assert_eq!(pids.len(), 1);
    signal(pids[0], libc::SIGKILL);
    wait_until("the server is gone", || dir.server_pids().is_empty());
    wait_until("the retry's time has passed", || {
        now_ms() > not_before + 100
    });

    // The next server (started by this command) finds the retry on the ledger.
    let done = wait_status(&dir, retry_id, "succeeded");
    assert_eq!(done["trigger"], "retry");
    assert_eq!(done["parent_id"], first);
    assert!(ms_of(done["started_at"].as_str().unwrap()) >= not_before);
    let runs = runs_of(&dir, "sync");
    assert_eq!(runs.len(), 2, "the retry ran once: {runs:#?}");
    assert!(text(&dir.run(&["logs", &retry_id.to_string()]).stdout).contains("synced"));
}

#[test]
fn a_cut_run_is_resumed_not_retried_and_its_resume_keeps_the_retries() {
    let mut dir = StateDir::new();
    dir.set_env("STEAD_RESUME_DELAY_MS", "0");
    let started = dir.root().join("started");
    let hook = dir.root().join("hook-ran");
    add_job(
        &dir,
        "journal",
        &[
            "--retries",
            "1",
            "--retry-delay",
            "100ms",
            "--on-failure",
            &format!("touch {}", hook.display()),
        ],
        // The first attempt blocks until it is cut; its resume fails; the retry of the
        // resume succeeds.
        &format!(
            "case $STEAD_ATTEMPT in 1) touch {}; while :; do sleep 0.05; done;; 2) exit 3;; *) echo written;; esac",
            started.display()
        ),
    );
    let first = json(&dir, &["run", "journal"])["id"].as_i64().unwrap();
    wait_until("the first attempt started", || started.exists());
    kill_monitor_and_group(monitor_of(&wait_status(&dir, first, "running")));

    let cut = wait_status(&dir, first, "interrupted");
    let resume_id = {
        let mut next = Value::Null;
        wait_until("the cut run is carried on", || {
            next = run_of(&dir, first)["followed_by"].clone();
            next.is_i64()
        });
        next.as_i64().unwrap()
    };
    let resume = run_of(&dir, resume_id);
    assert_eq!(
        resume["trigger"], "resume",
        "a cut is resumed, not retried: {resume}"
    );
    assert_eq!(resume["attempt"], 2);
    let resume = wait_status(&dir, resume_id, "failed");
    let retry_id = resume["followed_by"]
        .as_i64()
        .expect("the resume kept the retry the cut did not spend");
    let retry = wait_status(&dir, retry_id, "succeeded");
    assert_eq!(retry["trigger"], "retry");
    assert_eq!(retry["parent_id"], resume_id);
    assert_eq!(retry["attempt"], 3);
    for run in [&resume, &retry] {
        assert_eq!(run["idempotency_key"], cut["idempotency_key"]);
    }
    let runs = runs_of(&dir, "journal");
    assert_eq!(runs.len(), 3, "{runs:#?}");
    assert!(
        children_of(&dir, "journal", first)
            .iter()
            .all(|r| r["trigger"] != "retry"),
        "the cut run was retried: {runs:#?}"
    );
    wait_monitors_gone(&dir);
    assert!(
        !hook.exists(),
        "a hook ran though the last attempt succeeded"
    );
}

#[test]
fn retry_settings_are_checked_and_shown() {
    let dir = StateDir::new();
    for (args, says) in [
        (vec!["--retries", "101"], "more than the most allowed (100)"),
        (
            vec![
                "--retries",
                "2",
                "--retry-delay",
                "2h",
                "--retry-max-delay",
                "1h",
            ],
            "is longer than retry_max_delay",
        ),
        (vec!["--retries", "2", "--retry-delay", "soon"], "soon"),
        (
            vec!["--retries", "2", "--retry-delay", "2h"],
            "is longer than retry_max_delay \"1h\" (the default",
        ),
    ] {
        let mut all = vec!["job", "add", "bad"];
        all.extend(args);
        all.extend(["--", "true"]);
        let out = dir.run(&all);
        assert!(!out.status.success());
        assert!(text(&out.stderr).contains(says), "{}", text(&out.stderr));
    }
    assert_eq!(json(&dir, &["job", "ls"]), serde_json::json!([]));
    let job = json(
        &dir,
        &[
            "job",
            "add",
            "ok",
            "--retries",
            "2",
            "--retry-delay",
            "1500ms",
            "--",
            "true",
        ],
    );
    assert_eq!(job["retries"], 2);
    let shown = text(&dir.run(&["job", "show", "ok"]).stdout);
    assert!(
        shown.contains("retries      2 (first after 1500ms, doubling up to 1h"),
        "{shown}"
    );
}

#[test]
fn run_follow_prints_each_attempts_output_as_written_and_exits_as_the_last() {
    let dir = StateDir::new();
    add_job(
        &dir,
        "flaky",
        &["--retries", "2", "--retry-delay", "100ms"],
        "echo \"attempt $STEAD_ATTEMPT\"; [ \"$STEAD_ATTEMPT\" -ge 2 ] || exit 5",
    );
    let out = dir.run(&["run", "flaky", "--follow"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    // The command's output alone on stdout; what happened on stderr.
    assert_eq!(text(&out.stdout), "attempt 1\nattempt 2\n");
    let said = text(&out.stderr);
    assert!(said.contains("failed: exited with code 5"), "{said}");
    assert!(said.contains("(retry, attempt 2): succeeded"), "{said}");

    add_job(&dir, "broken", &[], "echo oops >&2; exit 9");
    let out = dir.run(&["run", "broken", "--follow"]);
    assert_eq!(out.status.code(), Some(9));
    assert_eq!(text(&out.stdout), "oops\n");
    let out = dir.run(&["run", "broken", "--follow", "--json"]);
    assert_eq!(out.status.code(), Some(2), "--follow and --json conflict");
}
