//! Run parameters end to end: `stead run NAME --env K=V -- ARGS` and the HTTP body give
//! one run its own environment and arguments, recorded on the run, kept by its resume,
//! and gone from the next run.

use serde_json::{Value, json as object};

use crate::api::Api;
use crate::harness::*;

/// A shell job that prints its arguments one per line and `$GREETING`.
fn echo_job(dir: &StateDir, extra: &[&str], script: &str) {
    add_job(dir, "echo", extra, script);
}

#[test]
fn parameters_reach_the_command_are_recorded_and_do_not_leak_into_the_next_run() {
    let dir = StateDir::new();
    echo_job(
        &dir,
        &["--env", "GREETING=job"],
        "echo \"greeting=$GREETING mode=${MODE-unset}\"; for a in \"$@\"; do echo \"arg=$a\"; done",
    );
    let out = dir.run(&[
        "run",
        "echo",
        "--wait",
        "--env",
        "GREETING=run",
        "--env",
        "MODE=full",
        "--",
        "one",
        "two words",
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let id = runs_of(&dir, "echo")[0]["id"].as_i64().unwrap();
    assert_eq!(
        log_of(&dir, id),
        "greeting=run mode=full\narg=one\narg=two words\n"
    );
    let run = run_of(&dir, id);
    assert_eq!(
        run["params"],
        object!({"env": {"GREETING": "run", "MODE": "full"}, "args": ["one", "two words"]})
    );
    let shown = text(&dir.run(&["show", &id.to_string()]).stdout);
    assert!(shown.contains("params.env       MODE=full"), "{shown}");
    assert!(
        shown.contains("params.args      one 'two words'"),
        "{shown}"
    );

    // The next run has the job's own environment and no arguments.
    let next = json(&dir, &["run", "echo", "--wait"]);
    assert!(next["params"].is_null(), "{next}");
    assert_eq!(
        log_of(&dir, next["id"].as_i64().unwrap()),
        "greeting=job mode=unset\n"
    );
}

#[test]
fn arguments_append_to_a_programs_argv() {
    let dir = StateDir::new();
    json(
        &dir,
        &["job", "add", "printf", "--", "printf", "[%s]\\n", "fixed"],
    );
    let run = json(&dir, &["run", "printf", "--wait", "--", "a b", "--flag"]);
    assert_eq!(run["status"], "succeeded");
    assert_eq!(
        log_of(&dir, run["id"].as_i64().unwrap()),
        "[fixed]\n[a b]\n[--flag]\n"
    );
}

#[test]
fn the_http_api_takes_parameters_in_the_body_of_a_run() {
    let dir = StateDir::new();
    echo_job(&dir, &[], "echo \"$GREETING\" \"$@\"");
    let api = Api::start(&dir);
    let answer = api.post_json(
        "/api/jobs/echo/run",
        &object!({"env": {"GREETING": "hello"}, "args": ["from", "http"]}),
    );
    assert_eq!(answer.status, 201, "{}", answer.text());
    let run = answer.json();
    assert_eq!(
        run["params"],
        object!({"env": {"GREETING": "hello"}, "args": ["from", "http"]})
    );
    let id = run["id"].as_i64().unwrap();
    wait_status(&dir, id, "succeeded");
    assert_eq!(log_of(&dir, id), "hello from http\n");
    // The same refusals as the CLI's, with nothing written.
    let answer = api.post_json(
        "/api/jobs/echo/run",
        &object!({"env": {"STEAD_RUN_ID": "1"}}),
    );
    assert_eq!(answer.status, 400, "{}", answer.text());
    assert!(answer.text().contains("reserved"), "{}", answer.text());
    assert_eq!(runs_of(&dir, "echo").len(), 1);
}

#[test]
fn a_resume_keeps_the_parameters_of_the_run_it_resumes() {
    let mut dir = StateDir::new();
    dir.set_env("STEAD_RESUME_DELAY_MS", "0");
    let started = dir.root().join("started");
    echo_job(
        &dir,
        &[],
        &format!(
            "if [ \"$STEAD_ATTEMPT\" = 1 ]; then touch {}; while :; do sleep 0.05; done; fi; echo \"$TARGET\" \"$@\"",
            started.display()
        ),
    );
    let first = json(
        &dir,
        &["run", "echo", "--env", "TARGET=prod", "--", "--since", "2d"],
    )["id"]
        .as_i64()
        .unwrap();
    wait_until("the first attempt started", || started.exists());
    kill_monitor_and_group(monitor_of(&wait_status(&dir, first, "running")));
    wait_status(&dir, first, "interrupted");
    let mut resume = Value::Null;
    wait_until("the cut run is resumed", || {
        resume = run_of(&dir, first)["followed_by"].clone();
        resume.is_i64()
    });
    let resume = wait_status(&dir, resume.as_i64().unwrap(), "succeeded");
    assert_eq!(resume["trigger"], "resume");
    assert_eq!(resume["params"], run_of(&dir, first)["params"]);
    assert_eq!(
        log_of(&dir, resume["id"].as_i64().unwrap()),
        "prod --since 2d\n"
    );
}

#[test]
fn bad_parameters_are_refused_with_a_reason_and_nothing_written() {
    let dir = StateDir::new();
    echo_job(&dir, &[], "true");
    let big = format!("BIG={}", "x".repeat(70 * 1024));
    let nul_arg = "a\u{1}b".replace('\u{1}', "\0");
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["--env", "1BAD=x"], "not a valid variable name"),
        (vec!["--env", "STEAD_RUN_ID=9"], "reserved"),
        (vec!["--env", &big], "too large"),
    ];
    for (args, says) in cases {
        let mut all = vec!["run", "echo"];
        all.extend(args);
        let out = dir.run(&all);
        assert_eq!(out.status.code(), Some(65), "{:?}", text(&out.stderr));
        assert!(text(&out.stderr).contains(says), "{}", text(&out.stderr));
    }
    // A NUL byte cannot travel in argv: it comes through the API.
    let api = Api::start(&dir);
    let answer = api.post_json("/api/jobs/echo/run", &object!({"args": [nul_arg]}));
    assert_eq!(answer.status, 400, "{}", answer.text());
    assert!(answer.text().contains("NUL"), "{}", answer.text());
    let too_many: Vec<String> = (0..300).map(|i| i.to_string()).collect();
    let answer = api.post_json("/api/jobs/echo/run", &object!({"args": too_many}));
    assert_eq!(answer.status, 400, "{}", answer.text());
    assert!(
        answer.text().contains("too many parameters"),
        "{}",
        answer.text()
    );
    assert!(runs_of(&dir, "echo").is_empty());
}
