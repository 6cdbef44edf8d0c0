//! Chaining end to end: a job that runs `--after` another runs when a run of it succeeds
//! (any trigger), linked to that run; not after a failure or a cut (the cut run's resume,
//! when it succeeds, triggers it); a cycle is refused when the job is added.

use serde_json::Value;

use crate::harness::*;

#[test]
fn a_downstream_job_runs_after_each_success_only_and_names_the_upstream_run() {
    let mut dir = StateDir::new();
    dir.set_env("STEAD_RESUME_DELAY_MS", "0");
    let started = dir.root().join("started");
    add_job(
        &dir,
        "fetch",
        &[],
        &format!(
            "case \"$MODE\" in fail) exit 2;; block) if [ \"$STEAD_ATTEMPT\" = 1 ]; then touch {}; while :; do sleep 0.05; done; fi;; esac; echo fetched",
            started.display()
        ),
    );
    add_job(
        &dir,
        "report",
        &["--after", "fetch"],
        "echo \"report after $STEAD_TRIGGER\"",
    );

    // A failure: nothing downstream.
    let failed = json_anyway(&dir, &["run", "fetch", "--wait", "--env", "MODE=fail"]);
    assert_eq!(failed["status"], "failed");
    // A success: one downstream run, linked to it.
    let ok = json_anyway(&dir, &["run", "fetch", "--wait"])["id"].clone();
    let mut after = Vec::new();
    wait_until("report ran after the success", || {
        after = runs_of(&dir, "report");
        after.iter().any(|r| r["status"] == "succeeded")
    });
    assert_eq!(after.len(), 1, "{after:#?}");
    assert_eq!(after[0]["trigger"], "after");
    assert_eq!(after[0]["parent_id"], ok);
    let log = text(&dir.run(&["logs", &after[0]["id"].to_string()]).stdout);
    assert_eq!(log, "report after after\n");

    // A cut: nothing downstream until its resume succeeds, then one run after the resume.
    let cut = json(&dir, &["run", "fetch", "--env", "MODE=block"])["id"]
        .as_i64()
        .unwrap();
    wait_until("the blocking fetch started", || started.exists());
    kill_monitor_and_group(monitor_of(&wait_status(&dir, cut, "running")));
    let mut resume = Value::Null;
    wait_until("the cut run is resumed", || {
        resume = run_of(&dir, cut)["followed_by"].clone();
        resume.is_i64()
    });
    wait_status(&dir, resume.as_i64().unwrap(), "succeeded");
    wait_until("report ran after the resume", || {
        runs_of(&dir, "report").len() == 2
    });
    let second = &runs_of(&dir, "report")[0];
    assert_eq!(second["parent_id"], resume, "{second}");
    wait_status(&dir, second["id"].as_i64().unwrap(), "succeeded");
    let parents: Vec<Value> = runs_of(&dir, "report")
        .iter()
        .map(|r| r["parent_id"].clone())
        .collect();
    assert!(!parents.contains(&failed["id"]));
    assert!(!parents.contains(&Value::from(cut)));
}

#[test]
fn a_scheduled_success_chains_too_and_a_disabled_downstream_job_does_not_run() {
    let dir = StateDir::new();
    add_job(&dir, "tick", &["--every", "1s"], "echo tick");
    add_job(&dir, "tock", &["--after", "tick"], "echo tock");
    add_job(
        &dir,
        "never",
        &["--after", "tick", "--disabled"],
        "echo never",
    );
    wait_until("tock ran after a fire", || {
        runs_of(&dir, "tock")
            .iter()
            .any(|r| r["status"] == "succeeded")
    });
    let tock = runs_of(&dir, "tock").pop().unwrap();
    let upstream = run_of(&dir, tock["parent_id"].as_i64().unwrap());
    assert_eq!(upstream["job"], "tick");
    assert_eq!(upstream["trigger"], "scheduled");
    assert!(runs_of(&dir, "never").is_empty());
}

#[test]
fn a_cycle_or_a_missing_upstream_is_refused_with_nothing_changed() {
    let dir = StateDir::new();
    add_job(&dir, "a", &[], "true");
    add_job(&dir, "b", &["--after", "a"], "true");
    add_job(&dir, "c", &["--after", "b"], "true");
    let before = json(&dir, &["job", "ls"]);
    // Making a run after c would close a -> b -> c -> a.
    let file = dir.root().join("cycle.toml");
    std::fs::write(
        &file,
        "[[job]]\nname = \"a\"\nafter = [\"c\"]\ncommand = [\"true\"]\n\
         [[job]]\nname = \"b\"\nafter = [\"a\"]\ncommand = [\"true\"]\n\
         [[job]]\nname = \"c\"\nafter = [\"b\"]\ncommand = [\"true\"]\n",
    )
    .unwrap();
    let out = dir.run(&["apply", file.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(65), "{}", text(&out.stderr));
    let said = text(&out.stderr);
    assert!(said.contains("cycle"), "{said}");
    assert_eq!(json(&dir, &["job", "ls"]), before);
    for (args, says) in [
        (
            vec!["job", "add", "d", "--after", "nope", "--", "true"],
            "nope",
        ),
        (
            vec!["job", "add", "e", "--after", "e", "--", "true"],
            "cannot run after itself",
        ),
    ] {
        let out = dir.run(&args);
        assert_eq!(out.status.code(), Some(65), "{}", text(&out.stderr));
        assert!(text(&out.stderr).contains(says), "{}", text(&out.stderr));
    }
    // A job others run after cannot be removed from under them.
    let out = dir.run(&["job", "rm", "a"]);
    assert!(!out.status.success());
    assert!(text(&out.stderr).contains('b'), "{}", text(&out.stderr));
    assert_eq!(json(&dir, &["job", "ls"]), before);
}
