//! Queues end to end: at most N runs of a queue's jobs at once on a host, the rest
//! waiting `queued` in order, none skipped for the queue, and the host's default limit.

use std::path::Path;

use crate::harness::*;

/// A script that appends `start ID MS` and `end ID MS` lines around a short sleep, so the
/// runs' own record says how many overlapped.
fn recorded(book: &Path) -> String {
    let book = book.display();
    format!(
        "echo \"start $STEAD_RUN_ID $(date +%s%3N)\" >> {book}; sleep 0.3; echo \"end $STEAD_RUN_ID $(date +%s%3N)\" >> {book}"
    )
}

/// The most runs the book shows going at once, and the order runs started in.
fn overlap(book: &Path) -> (usize, Vec<i64>) {
    let text = std::fs::read_to_string(book).unwrap();
    let mut events: Vec<(i64, bool, i64)> = text
        .lines()
        .map(|l| {
            let words: Vec<&str> = l.split_whitespace().collect();
            (
                words[2].parse().unwrap(),
                words[0] == "start",
                words[1].parse().unwrap(),
            )
        })
        .collect();
    let started: Vec<i64> = events.iter().filter(|e| e.1).map(|e| e.2).collect();
    // Ends sort before starts at the same millisecond: touching is not overlapping.
    events.sort_by_key(|&(at, start, _)| (at, start));
    let (mut now, mut most) = (0usize, 0usize);
    for (_, start, _) in events {
        if start {
            now += 1;
            most = most.max(now);
        } else {
            now -= 1;
        }
    }
    (most, started)
}

#[test]
fn a_queue_of_two_never_has_more_than_two_running_and_all_six_succeed() {
    let dir = StateDir::new();
    let book = dir.root().join("book");
    let queue = json(&dir, &["queue", "set", "gpu", "--parallel", "2"]);
    assert_eq!(queue["parallel"], 2);
    add_job(
        &dir,
        "render",
        &["--queue", "gpu", "--concurrency", "allow"],
        &recorded(&book),
    );
    let ids: Vec<i64> = (0..6)
        .map(|_| json(&dir, &["run", "render"])["id"].as_i64().unwrap())
        .collect();
    let mut most_seen = 0;
    wait_until("all six have ended", || {
        let runs = runs_of(&dir, "render");
        let running = runs.iter().filter(|r| r["status"] == "running").count();
        most_seen = most_seen.max(running);
        assert!(running <= 2, "{running} running at once: {runs:#?}");
        for r in runs
            .iter()
            .filter(|r| r["status"] == "queued" && r["waiting"].is_string())
        {
            assert_eq!(r["waiting"], "a place in queue gpu", "{r}");
        }
        runs.iter().all(|r| r["status"] == "succeeded")
    });
    let (most, started) = overlap(&book);
    assert_eq!(most, 2, "the runs' own record shows {most} at once");
    assert!(most_seen <= 2);
    // Two runs handed over in one pass race to exec their commands, so the order is
    // checked where one goes at a time (the tests below).
    let mut started = started;
    started.sort_unstable();
    assert_eq!(started, ids, "each run started once");
    let listed = json(&dir, &["queue", "ls"]);
    assert_eq!(listed[0]["jobs"], serde_json::json!(["render"]));
    assert_eq!(
        (listed[0]["running"].clone(), listed[0]["waiting"].clone()),
        (0.into(), 0.into())
    );
}

#[test]
fn fires_wait_for_the_queue_instead_of_being_skipped() {
    let dir = StateDir::new();
    json(&dir, &["queue", "set", "one", "--parallel", "1"]);
    let book = dir.root().join("book");
    add_job(
        &dir,
        "slow",
        &["--queue", "one", "--concurrency", "allow"],
        "sleep 2",
    );
    add_job(
        &dir,
        "tick",
        &["--every", "1s", "--queue", "one"],
        &recorded(&book),
    );
    let slow = json(&dir, &["run", "slow"])["id"].as_i64().unwrap();
    wait_status(&dir, slow, "running");
    // While the slow run holds the queue's one place, tick's fires wait queued.
    wait_until("a fire of tick waits for the queue", || {
        runs_of(&dir, "tick")
            .iter()
            .any(|r| r["status"] == "queued" && r["waiting"] == "a place in queue one")
    });
    // A run waiting for the queue is cancelled at once, and starts nothing.
    let waiting = runs_of(&dir, "tick")
        .into_iter()
        .find(|r| r["status"] == "queued")
        .expect("a waiting fire");
    let id = waiting["id"].to_string();
    let cancelled = json(&dir, &["cancel", &id]);
    assert_eq!(cancelled["status"], "cancelled", "{cancelled}");
    assert!(cancelled["waiting"].is_null(), "{cancelled}");
    wait_status(&dir, slow, "succeeded");
    wait_until("tick has run", || {
        runs_of(&dir, "tick")
            .iter()
            .any(|r| r["status"] == "succeeded")
    });
    // A fire is skipped only by the job's own policy (forbid: one of its runs is in
    // flight, waiting for the queue or running), never for the queue.
    for run in runs_of(&dir, "tick")
        .iter()
        .filter(|r| r["status"] == "skipped")
    {
        let reason = run["reason"].as_str().unwrap();
        assert!(reason.ends_with("(concurrency = forbid)"), "{reason}");
    }
    let (most, _) = overlap(&book);
    assert_eq!(most, 1);
}

/// With one place, the runs' own record shows the order they were handed over in.
#[test]
fn the_hosts_default_limit_holds_jobs_without_a_queue_in_order() {
    let dir = StateDir::new();
    dir.write_config("[queues]\ndefault_parallel = 1\n");
    let book = dir.root().join("book");
    add_job(&dir, "a", &["--concurrency", "allow"], &recorded(&book));
    add_job(&dir, "b", &["--concurrency", "allow"], &recorded(&book));
    let ids: Vec<i64> = ["a", "b", "a", "b"]
        .iter()
        .map(|job| json(&dir, &["run", job])["id"].as_i64().unwrap())
        .collect();
    for id in &ids {
        wait_status(&dir, *id, "succeeded");
    }
    let (most, started) = overlap(&book);
    assert_eq!(most, 1);
    assert_eq!(started, ids);
}

#[test]
fn queue_mistakes_are_refused_with_nothing_changed() {
    let dir = StateDir::new();
    let out = dir.run(&["queue", "set", "gpu", "--parallel", "0"]);
    assert_eq!(out.status.code(), Some(65));
    assert!(text(&out.stderr).contains("parallel must be at least 1"));
    let out = dir.run(&["job", "add", "j", "--queue", "nope", "--", "true"]);
    assert!(!out.status.success());
    assert!(text(&out.stderr).contains("nope"), "{}", text(&out.stderr));
    json(&dir, &["queue", "set", "gpu", "--parallel", "3"]);
    json(&dir, &["job", "add", "j", "--queue", "gpu", "--", "true"]);
    let out = dir.run(&["queue", "rm", "gpu"]);
    assert!(!out.status.success());
    assert!(text(&out.stderr).contains("j"), "{}", text(&out.stderr));
    json(&dir, &["job", "rm", "j"]);
    assert_eq!(json(&dir, &["queue", "rm", "gpu"])["name"], "gpu");
    assert_eq!(json(&dir, &["queue", "ls"]), serde_json::json!([]));
}
