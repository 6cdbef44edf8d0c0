//! Jobs and runs end to end through the real CLI: on-demand runs, exit codes, logs,
//! cancel of a process tree, timeouts, overlap policies, scheduled fires, and runs that
//! outlive a crashed server.

use std::path::Path;

use serde_json::Value;

use crate::harness::*;

#[test]
fn an_on_demand_run_waits_logs_and_sees_its_environment() {
    let dir = StateDir::new();
    add_job(
        &dir,
        "hello",
        &[],
        "echo out; echo err >&2; echo \"job=$STEAD_JOB trigger=$STEAD_TRIGGER run=$STEAD_RUN_ID key=$STEAD_IDEMPOTENCY_KEY attempt=$STEAD_ATTEMPT\"",
    );
    let run = json(&dir, &["run", "hello", "--wait"]);
    assert_eq!(run["status"], "succeeded", "{run}");
    assert_eq!(run["exit_code"], 0);
    assert_eq!(run["trigger"], "on_demand");
    for field in [
        "id",
        "job",
        "trigger",
        "status",
        "exit_code",
        "signal",
        "reason",
        "attempt",
        "parent_id",
        "idempotency_key",
        "machine_id",
        "monitor_pid",
        "scheduled_at",
        "created_at",
        "started_at",
        "ended_at",
        "log_path",
    ] {
        assert!(run.get(field).is_some(), "missing {field}: {run}");
    }
    let id = run["id"].as_i64().unwrap();
    let log = std::fs::read_to_string(run["log_path"].as_str().unwrap()).unwrap();
    assert!(log.contains("out\n") && log.contains("err\n"), "{log}");
    assert!(
        log.contains(&format!(
            "job=hello trigger=on_demand run={id} key=hello#{id} attempt=1"
        )),
        "{log}"
    );
    let logs = dir.run(&["logs", &id.to_string()]);
    assert_eq!(text(&logs.stdout), log);
}

#[test]
fn run_wait_exits_with_the_commands_exit_code() {
    let dir = StateDir::new();
    add_job(&dir, "seven", &[], "exit 7");
    let out = dir.run(&["run", "seven", "--wait"]);
    assert_eq!(out.status.code(), Some(7), "{}", text(&out.stderr));
    let runs = json(&dir, &["runs", "--job", "seven"]);
    assert_eq!(runs[0]["status"], "failed");
    assert_eq!(runs[0]["exit_code"], 7);
    assert_eq!(runs[0]["reason"], "exited with code 7");
}

#[test]
fn cancel_kills_the_whole_process_tree() {
    let dir = StateDir::new();
    let marker = format!("30001{}", std::process::id());
    add_job(
        &dir,
        "tree",
        &[],
        &format!("sleep {marker} & sleep {marker} & wait"),
    );
    let run = json(&dir, &["run", "tree"]);
    let id = run["id"].as_i64().unwrap();
    wait_status(&dir, id, "running");
    wait_until("both sleeps started", || processes_with(&marker) == 2);
    let cancelled = json(&dir, &["cancel", &id.to_string()]);
    assert_eq!(cancelled["status"], "cancelled", "{cancelled}");
    wait_until("no sleep survives", || processes_with(&marker) == 0);
}

#[test]
fn a_timeout_ends_the_run_as_failed_and_leaves_nothing_behind() {
    let dir = StateDir::new();
    let marker = format!("30002{}", std::process::id());
    add_job(
        &dir,
        "slow",
        &["--timeout", "1s"],
        &format!("sleep {marker}"),
    );
    let out = dir.run(&["run", "slow", "--wait", "--json"]);
    // Killed by SIGTERM at the timeout: 128 + 15.
    assert_eq!(out.status.code(), Some(143), "{}", text(&out.stderr));
    let run: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(run["status"], "failed", "{run}");
    assert_eq!(run["signal"], 15, "{run}");
    assert!(
        run["reason"]
            .as_str()
            .unwrap()
            .contains("timed out after 1s"),
        "{run}"
    );
    wait_until("the sleep is gone", || processes_with(&marker) == 0);
}

#[test]
fn overlap_policies_forbid_replace_and_allow() {
    let dir = StateDir::new();
    let gate = dir.path().join("gate");
    let script = format!("while [ ! -e {} ]; do sleep 0.02; done", gate.display());
    add_job(&dir, "forbid", &[], &script);
    add_job(&dir, "replace", &["--concurrency", "replace"], &script);
    add_job(&dir, "allow", &["--concurrency", "allow"], &script);

    let first = json(&dir, &["run", "forbid"])["id"].as_i64().unwrap();
    wait_status(&dir, first, "running");
    let second = json(&dir, &["run", "forbid"]);
    assert_eq!(second["status"], "skipped");
    assert!(
        second["reason"]
            .as_str()
            .unwrap()
            .contains(&format!("run {first} of this job is still running")),
        "{second}"
    );

    let old = json(&dir, &["run", "replace"])["id"].as_i64().unwrap();
    wait_status(&dir, old, "running");
    let new = json(&dir, &["run", "replace"])["id"].as_i64().unwrap();
    wait_status(&dir, old, "cancelled");
    wait_status(&dir, new, "running");

    let a = json(&dir, &["run", "allow"])["id"].as_i64().unwrap();
    let b = json(&dir, &["run", "allow"])["id"].as_i64().unwrap();
    wait_status(&dir, a, "running");
    wait_status(&dir, b, "running");

    std::fs::write(&gate, b"").unwrap();
    for id in [first, new, a, b] {
        wait_status(&dir, id, "succeeded");
    }
}

#[test]
fn an_interval_job_fires_on_schedule() {
    let dir = StateDir::new();
    add_job(&dir, "tick", &["--every", "1s"], "echo tick");
    let mut runs = Value::Null;
    wait_until("two scheduled runs succeeded", || {
        runs = json(&dir, &["runs", "--job", "tick", "--status", "succeeded"]);
        runs.as_array().unwrap().len() >= 2
    });
    for run in runs.as_array().unwrap() {
        assert_eq!(run["trigger"], "scheduled", "{run}");
        assert!(run["scheduled_at"].is_string());
        assert!(
            run["idempotency_key"]
                .as_str()
                .unwrap()
                .starts_with("tick@"),
            "{run}"
        );
    }
    // One run per fire: the scheduled times are distinct.
    let mut times: Vec<&str> = runs
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["scheduled_at"].as_str().unwrap())
        .collect();
    let n = times.len();
    times.dedup();
    assert_eq!(times.len(), n);
}

#[test]
fn runs_outlive_a_crashed_server_and_end_exactly_once() {
    let dir = StateDir::new();
    let gate = dir.path().join("go");
    for code in [0, 3, 4] {
        add_job(
            &dir,
            &format!("survivor{code}"),
            &[],
            &format!(
                "while [ ! -e {} ]; do sleep 0.02; done; exit {code}",
                gate.display()
            ),
        );
    }
    let ids: Vec<i64> = [0, 3, 4]
        .iter()
        .map(|code| {
            json(&dir, &["run", &format!("survivor{code}")])["id"]
                .as_i64()
                .unwrap()
        })
        .collect();
    for id in &ids {
        wait_status(&dir, *id, "running");
    }
    let old = dir.status();
    signal(old["pid"].as_u64().unwrap() as u32, libc::SIGKILL);

    // A new server adopts the three live monitors.
    let new = dir.status();
    assert_ne!(new["server_id"], old["server_id"]);
    assert_eq!(
        dir.log().matches("adopted a running run's monitor").count(),
        3
    );
    for id in &ids {
        assert_eq!(run_of(&dir, *id)["status"], "running");
    }

    std::fs::write(&gate, b"").unwrap();
    let expected = [("succeeded", 0), ("failed", 3), ("failed", 4)];
    for (id, (status, code)) in ids.iter().zip(expected) {
        let run = wait_status(&dir, *id, status);
        assert_eq!(run["exit_code"], code, "{run}");
        assert!(run["ended_at"].is_string());
    }
}

#[test]
fn bad_jobs_are_refused_with_precise_errors_and_change_nothing() {
    let dir = StateDir::new();
    let cases: &[(&[&str], &str)] = &[
        (
            &["job", "add", "x", "--cron", "61 * * * *", "--", "true"],
            "minute field \"61\"",
        ),
        (
            &[
                "job",
                "add",
                "x",
                "--cron",
                "* * * * *",
                "--tz",
                "Mars/Olympus",
                "--",
                "true",
            ],
            "unknown time zone \"Mars/Olympus\"",
        ),
        (&["job", "add", "-bad", "--", "true"], ""),
    ];
    for (args, message) in cases {
        let out = dir.run(args);
        assert!(!out.status.success(), "{args:?} was accepted");
        assert!(text(&out.stderr).contains(message), "{}", text(&out.stderr));
    }
    let jobs = json(&dir, &["job", "ls"]);
    assert_eq!(jobs.as_array().unwrap().len(), 0, "{jobs}");

    add_job(&dir, "once", &[], "true");
    let out = dir.run(&["job", "add", "once", "--", "true"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("already exists"),
        "{}",
        text(&out.stderr)
    );
    let out = dir.run(&["run", "missing"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("no job named \"missing\""));
}

#[test]
fn apply_is_idempotent_reports_changes_and_prunes() {
    let dir = StateDir::new();
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/jobs.toml");
    let first = json(&dir, &["apply", example.to_str().unwrap()]);
    assert!(!first["created"].as_array().unwrap().is_empty(), "{first}");
    let again = json(&dir, &["apply", example.to_str().unwrap()]);
    assert!(again["created"].as_array().unwrap().is_empty(), "{again}");
    assert!(again["changed"].as_array().unwrap().is_empty(), "{again}");
    assert_eq!(again["unchanged"], first["created"]);

    let file = dir.path().join("one.toml");
    std::fs::write(
        &file,
        "[[job]]\nname = \"hello\"\ncommand = [\"echo\", \"changed\"]\n",
    )
    .unwrap();
    let dry = json(
        &dir,
        &["apply", file.to_str().unwrap(), "--prune", "--dry-run"],
    );
    assert_eq!(dry["dry_run"], true);
    assert!(!dry["removed"].as_array().unwrap().is_empty(), "{dry}");
    assert_eq!(
        json(&dir, &["job", "ls"]).as_array().unwrap().len(),
        first["created"].as_array().unwrap().len(),
        "a dry run changed something"
    );
    let pruned = json(&dir, &["apply", file.to_str().unwrap(), "--prune"]);
    assert_eq!(pruned["changed"][0]["name"], "hello", "{pruned}");
    assert_eq!(json(&dir, &["job", "ls"]).as_array().unwrap().len(), 1);

    std::fs::write(&file, "[[job]]\nname = \"typo\"\ncomand = [\"true\"]\n").unwrap();
    let out = dir.run(&["apply", file.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(65));
    assert!(
        text(&out.stderr).contains("comand"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn runs_are_listed_newest_first_with_filters_and_limits() {
    let dir = StateDir::new();
    add_job(&dir, "quick", &["--concurrency", "allow"], "true");
    add_job(&dir, "other", &[], "exit 1");
    let other = json(&dir, &["run", "other"])["id"].as_i64().unwrap();
    let ids: Vec<i64> = (0..20)
        .map(|_| json(&dir, &["run", "quick"])["id"].as_i64().unwrap())
        .collect();
    for id in &ids {
        wait_status(&dir, *id, "succeeded");
    }
    wait_status(&dir, other, "failed");
    let listed = json(&dir, &["runs", "--job", "quick", "--limit", "5"]);
    assert_eq!(listed.as_array().unwrap().len(), 5);
    assert_eq!(listed[0]["id"], *ids.last().unwrap());
    assert!(
        listed
            .as_array()
            .unwrap()
            .iter()
            .all(|r| r["job"] == "quick")
    );
    let failed = json(&dir, &["runs", "--status", "failed"]);
    assert_eq!(failed.as_array().unwrap().len(), 1);
    assert_eq!(failed[0]["id"], other);
}

#[test]
fn logs_follow_prints_output_as_it_comes_until_the_run_ends() {
    let dir = StateDir::new();
    let gate = dir.path().join("more");
    add_job(
        &dir,
        "chatty",
        &[],
        &format!(
            "echo first; while [ ! -e {} ]; do sleep 0.02; done; echo second",
            gate.display()
        ),
    );
    let id = json(&dir, &["run", "chatty"])["id"].as_i64().unwrap();
    let mut follow = dir
        .stead(&["logs", &id.to_string(), "--follow"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut stdout = std::io::BufReader::new(follow.stdout.take().unwrap());
    let mut line = String::new();
    std::io::BufRead::read_line(&mut stdout, &mut line).unwrap();
    assert_eq!(line, "first\n");
    // Still following: the run has not ended.
    assert!(follow.try_wait().unwrap().is_none());
    std::fs::write(&gate, b"").unwrap();
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut stdout, &mut rest).unwrap();
    assert_eq!(rest, "second\n");
    assert!(follow.wait().unwrap().success());
}
