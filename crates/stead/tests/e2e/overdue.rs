//! Overdue jobs: a job that expects a success within a while and has none is told of
//! once per lapse through the outbox, listed by `stead status` (also after a restart,
//! which tells of nothing again), and its next success ends the lapse.

use serde_json::Value;

use crate::harness::*;
use crate::receiver::Receiver;

fn overdue_jobs(dir: &StateDir) -> Vec<String> {
    dir.status()["overdue"]
        .as_array()
        .map(|all| {
            all.iter()
                .map(|o| o["job"].as_str().unwrap().to_string())
                .collect()
        })
        .unwrap_or_default()
}

fn events(receiver: &Receiver, n: usize) -> Vec<(String, String)> {
    wait_until(&format!("the receiver has {n} event(s)"), || {
        receiver.deliveries().len() >= n
    });
    receiver
        .events()
        .iter()
        .map(|e: &Value| {
            (
                e["event"].as_str().unwrap().to_string(),
                e["job"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[test]
fn an_overdue_job_is_told_once_listed_and_ended_by_its_next_success() {
    let mut dir = StateDir::new();
    dir.set_env("STEAD_HEARTBEAT_MS", "200");
    let receiver = Receiver::start();
    json(
        &dir,
        &[
            "notify",
            "add",
            "ops",
            "--url",
            &receiver.url(),
            "--event",
            "overdue",
            "--event",
            "recovered",
        ],
    );
    add_job(&dir, "daily", &["--expect-within", "3s"], "exit 0");
    add_job(&dir, "carefree", &[], "exit 0");
    let spec = json(&dir, &["job", "show", "daily"]);
    assert_eq!(spec["expect_within"], "3s");

    // No success within 3 s of being added: one `overdue` event, and status lists it.
    assert_eq!(
        events(&receiver, 1),
        [("overdue".to_string(), "daily".to_string())]
    );
    let overdue = &dir.status()["overdue"][0];
    assert_eq!(
        (overdue["job"].as_str(), overdue["expect_within"].as_str()),
        (Some("daily"), Some("3s"))
    );
    assert_eq!(overdue_jobs(&dir), ["daily"]);

    // A restart neither forgets the lapse nor tells of it again: the new server lists
    // it once its first check has read the ledger.
    dir.run(&["stop"]);
    wait_until("the new server lists the lapse", || {
        overdue_jobs(&dir) == ["daily"]
    });

    // Its next success ends the lapse (`recovered`, which the notifier asked for). The
    // job is disabled first, so no new lapse begins 3 s after that success.
    json(&dir, &["job", "disable", "daily"]);
    let run = json(&dir, &["run", "daily", "--wait"]);
    assert_eq!(run["status"], "succeeded");
    // Events reach a receiver in the order they were written: a second `overdue` for
    // the same lapse would have come before the recovery.
    assert_eq!(
        events(&receiver, 2),
        [
            ("overdue".to_string(), "daily".to_string()),
            ("recovered".to_string(), "daily".to_string())
        ]
    );
    wait_until("status lists no overdue job", || {
        overdue_jobs(&dir).is_empty()
    });
    assert_eq!(receiver.deliveries().len(), 2);
}
