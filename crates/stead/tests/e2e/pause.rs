//! Pausing a job for a while: its fires meanwhile are recorded `skipped` with a reason
//! naming the pause, and firing starts again by itself when the pause ends.

use crate::api::Api;
use crate::harness::*;

#[test]
fn a_three_second_pause_of_an_every_second_job_skips_its_fires_and_firing_resumes() {
    let dir = StateDir::new();
    add_job(&dir, "tick", &["--every", "1s"], "echo tick");
    wait_until("the job has fired", || {
        runs_of(&dir, "tick")
            .iter()
            .any(|r| r["status"] == "succeeded")
    });
    let paused = json(&dir, &["job", "pause", "tick", "--for", "3s"]);
    let until = ms_of(paused["paused_until"].as_str().expect("paused until"));
    let asked = now_ms();
    assert!((2_500..=3_500).contains(&(until - asked)), "{paused}");
    // Its next fire is the first the pause does not skip.
    let next = ms_of(paused["next_fire_at"].as_str().unwrap());
    assert!((until..until + 1_000).contains(&next), "{paused}");
    let listed = text(&dir.run(&["job", "ls"]).stdout);
    assert!(listed.contains("paused until "), "{listed}");

    // Firing starts again by itself: a fire after the pause runs.
    wait_until("a fire after the pause has run", || {
        runs_of(&dir, "tick").iter().any(|r| {
            r["trigger"] == "scheduled"
                && r["status"] == "succeeded"
                && ms_of(r["scheduled_at"].as_str().unwrap()) > until
        })
    });
    let runs = runs_of(&dir, "tick");
    let during: Vec<_> = runs
        .iter()
        .filter(|r| {
            let at = ms_of(r["scheduled_at"].as_str().unwrap_or("1970-01-01T00:00:00Z"));
            at > asked && at <= until
        })
        .collect();
    // Three seconds of an every-second job: two to four fires, none run.
    assert!((2..=4).contains(&during.len()), "{runs:#?}");
    for run in &during {
        assert_eq!(run["status"], "skipped", "{run}");
        let reason = run["reason"].as_str().unwrap();
        assert!(
            reason.starts_with("fire not run: the job is paused until "),
            "{reason}"
        );
    }
    // Each fire once, paused or not.
    let mut fires: Vec<&str> = runs
        .iter()
        .filter_map(|r| r["scheduled_at"].as_str())
        .collect();
    let all = fires.len();
    fires.sort_unstable();
    fires.dedup();
    assert_eq!(fires.len(), all, "a fire was recorded twice: {runs:#?}");
    assert!(json(&dir, &["job", "show", "tick"])["paused_until"].is_null());
    assert!(!text(&dir.run(&["job", "ls"]).stdout).contains("paused"));
}

#[test]
fn unpause_ends_a_pause_at_once_and_mistakes_are_refused() {
    let dir = StateDir::new();
    add_job(&dir, "tick", &["--every", "1s"], "echo tick");
    let paused = json(
        &dir,
        &["job", "pause", "tick", "--until", "2099-01-01T00:00:00Z"],
    );
    assert_eq!(paused["paused_until"], "2099-01-01T00:00:00.000Z");
    let asked = now_ms();
    let unpaused = json(&dir, &["job", "unpause", "tick"]);
    assert!(unpaused["paused_until"].is_null(), "{unpaused}");
    wait_until("it fires again", || {
        runs_of(&dir, "tick").iter().any(|r| {
            r["status"] == "succeeded" && ms_of(r["scheduled_at"].as_str().unwrap()) > asked
        })
    });
    for (args, says) in [
        (
            vec!["--until", "2001-01-01T00:00:00Z"],
            "has already passed",
        ),
        (vec!["--until", "tomorrow"], "is not an RFC 3339 time"),
        (vec!["--for", "a while"], "a while"),
    ] {
        let mut all = vec!["job", "pause", "tick"];
        all.extend(args);
        let out = dir.run(&all);
        assert_eq!(out.status.code(), Some(65), "{}", text(&out.stderr));
        assert!(text(&out.stderr).contains(says), "{}", text(&out.stderr));
    }
    add_job(&dir, "by-hand", &[], "true");
    let out = dir.run(&["job", "pause", "by-hand", "--for", "1m"]);
    assert_eq!(
        out.status.code(),
        Some(1),
        "a conflict with the job as it is"
    );
    assert!(
        text(&out.stderr).contains("a pause would hold back nothing"),
        "{}",
        text(&out.stderr)
    );
    let out = dir.run(&["job", "pause", "nope", "--for", "1m"]);
    assert!(!out.status.success());
    assert!(text(&out.stderr).contains("nope"));
    // Over HTTP, as the dashboard does it.
    let api = Api::start(&dir);
    let answer = api.post_json("/api/jobs/tick/pause", &serde_json::json!({"for": "1h"}));
    assert_eq!(answer.status, 200, "{}", answer.text());
    assert!(answer.json()["paused_until"].is_string());
    let answer = api.post("/api/jobs/tick/unpause");
    assert_eq!(answer.status, 200, "{}", answer.text());
    assert!(answer.json()["paused_until"].is_null());
    let answer = api.post("/api/jobs/tick/pause");
    assert_eq!(answer.status, 400, "{}", answer.text());
}
