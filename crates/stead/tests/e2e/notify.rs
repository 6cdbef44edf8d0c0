//! Notifications that arrive: events written to the ledger's outbox with the outcome that
//! causes them, POSTed to a real receiver (an HTTP server in the test) until it answers
//! 2xx, in order, each with an id for de-duplication; a cut run is no failure.

use std::time::Duration;

use serde_json::Value;

use crate::harness::*;
use crate::receiver::Receiver;

/// Waits until the receiver has been sent `n` events.
fn wait_events(receiver: &Receiver, n: usize) -> Vec<Value> {
    wait_until(&format!("the receiver has {n} event(s)"), || {
        receiver.deliveries().len() >= n
    });
    receiver.events()
}

fn notifier(dir: &StateDir, name: &str) -> Value {
    json(dir, &["notify", "ls"])
        .as_array()
        .unwrap()
        .iter()
        .find(|n| n["name"] == name)
        .cloned()
        .unwrap_or_else(|| panic!("no notifier {name}"))
}

#[test]
fn a_failure_reaches_the_receiver_and_a_cut_run_sends_no_failure() {
    let mut dir = StateDir::new();
    dir.set_env("STEAD_RESUME_DELAY_MS", "0");
    let receiver = Receiver::start();
    json(&dir, &["notify", "add", "ops", "--url", &receiver.url()]);
    add_job(&dir, "broken", &[], "echo boom; exit 7");
    let started = dir.root().join("started");
    add_job(
        &dir,
        "journal",
        &[],
        &format!(
            "if [ \"$STEAD_ATTEMPT\" = 1 ]; then touch {}; while :; do sleep 0.05; done; fi; echo resumed",
            started.display()
        ),
    );

    // A run cut by a dead monitor, then resumed and succeeding: nothing for the receiver.
    let cut = json(&dir, &["run", "journal"])["id"].as_i64().unwrap();
    wait_until("the journal started", || started.exists());
    kill_monitor_and_group(monitor_of(&wait_status(&dir, cut, "running")));
    let mut resume = Value::Null;
    wait_until("the cut run is resumed", || {
        resume = run_of(&dir, cut)["followed_by"].clone();
        resume.is_i64()
    });
    wait_status(&dir, resume.as_i64().unwrap(), "succeeded");

    // A genuine failure: one `failed` event, within a few seconds (the first attempt is
    // made as soon as the failure is recorded, not on a polling tick).
    let failed = json_anyway(&dir, &["run", "broken", "--wait"])["id"]
        .as_i64()
        .unwrap();
    let ended = std::time::Instant::now();
    let events = wait_events(&receiver, 1);
    let delay = receiver.deliveries()[0].at.saturating_duration_since(ended);
    assert!(
        delay < Duration::from_secs(5),
        "delivered {delay:?} after the failure"
    );
    // Events reach a receiver in the order they were written: had the cut written a
    // failure, it would have come first.
    assert_eq!(events.len(), 1, "{events:#?}");
    let event = &events[0];
    assert_eq!(event["event"], "failed");
    assert_eq!(event["job"], "broken");
    assert_eq!(event["run"]["id"], failed);
    assert_eq!(event["run"]["exit_code"], 7);
    assert!(
        event["text"].as_str().unwrap().contains("broken run"),
        "{event}"
    );
    let delivery = &receiver.deliveries()[0];
    assert_eq!(delivery.path, "/hook");
    assert_eq!(delivery.header("X-Stead-Event-Id"), event["id"].as_str());
    assert!(
        delivery
            .header("content-type")
            .unwrap()
            .starts_with("application/json")
    );
    assert!(delivery.header("X-Stead-Signature").is_none());
    // The server records the delivery once the receiver's answer is back, a moment after
    // the receiver has the event.
    let mut ops = Value::Null;
    wait_until("the delivery is recorded", || {
        ops = notifier(&dir, "ops");
        ops["delivered"] != 0
    });
    assert_eq!(
        (ops["pending"].clone(), ops["delivered"].clone()),
        (0.into(), 1.into())
    );
}

#[test]
fn events_written_while_the_receiver_is_down_arrive_in_order_once_it_is_back() {
    let dir = StateDir::new();
    let mut receiver = Receiver::down();
    json(
        &dir,
        &[
            "notify",
            "add",
            "ops",
            "--url",
            &receiver.url(),
            "--event",
            "failed",
            "--event",
            "recovered",
            "--sign",
        ],
    );
    add_job(&dir, "flip", &[], "exit ${CODE:-0}");
    let first = json_anyway(&dir, &["run", "flip", "--wait", "--env", "CODE=3"])["id"].clone();
    let second = json_anyway(&dir, &["run", "flip", "--wait", "--env", "CODE=4"])["id"].clone();
    let recovered = json_anyway(&dir, &["run", "flip", "--wait"])["id"].clone();
    // Delivery was tried and refused: the event waits in the outbox, saying why.
    wait_until("a delivery was refused", || {
        notifier(&dir, "ops")["last_error"]
            .as_str()
            .is_some_and(|e| e.contains("refused"))
    });
    assert_eq!(notifier(&dir, "ops")["pending"], 3);
    assert!(receiver.deliveries().is_empty());

    receiver.up();
    let events = wait_events(&receiver, 3);
    let got: Vec<(Value, Value)> = events
        .iter()
        .map(|e| (e["event"].clone(), e["run"]["id"].clone()))
        .collect();
    assert_eq!(
        got,
        [
            ("failed".into(), first),
            ("failed".into(), second),
            ("recovered".into(), recovered),
        ]
    );
    let ids: std::collections::BTreeSet<&str> =
        events.iter().map(|e| e["id"].as_str().unwrap()).collect();
    assert_eq!(ids.len(), 3, "each event has its own id");
    // Signed with the secret the state directory keeps.
    let secret_file = notifier(&dir, "ops")["secret_file"]
        .as_str()
        .unwrap()
        .to_string();
    let secret = std::fs::read_to_string(&secret_file).unwrap();
    for delivery in receiver.deliveries() {
        let expected = hmac_sha256_hex(secret.trim(), delivery.body.as_bytes());
        assert_eq!(
            delivery.header("X-Stead-Signature"),
            Some(format!("sha256={expected}").as_str())
        );
    }
    wait_until("the outbox is empty", || {
        notifier(&dir, "ops")["pending"] == 0
    });
}

#[test]
fn a_cut_run_not_resumed_is_told_and_missed_fires_on_request() {
    let mut dir = StateDir::new();
    dir.set_env("STEAD_RESUME_DELAY_MS", "0");
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
            "not_resumed",
            "--event",
            "interrupted",
            "--job",
            "journal",
        ],
    );
    let started = dir.root().join("started");
    add_job(
        &dir,
        "journal",
        &["--no-resume"],
        &format!("touch {}; while :; do sleep 0.05; done", started.display()),
    );
    add_job(&dir, "other", &["--no-resume"], "exit 1");
    let cut = json(&dir, &["run", "journal"])["id"].as_i64().unwrap();
    wait_until("the journal started", || started.exists());
    kill_monitor_and_group(monitor_of(&wait_status(&dir, cut, "running")));
    let events = wait_events(&receiver, 2);
    let kinds: Vec<&str> = events
        .iter()
        .map(|e| e["event"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["interrupted", "not_resumed"], "{events:#?}");
    assert!(events.iter().all(|e| e["run"]["id"] == cut));
    assert!(
        events[1]["text"].as_str().unwrap().contains("not resumed"),
        "{events:#?}"
    );
    // A failure of a job the notifier does not name is not sent to it.
    json_anyway(&dir, &["run", "other", "--wait"]);
    let test = json(&dir, &["notify", "test", "ops"]);
    assert_eq!(test["delivered"], true, "{test}");
    wait_events(&receiver, 3);
    assert_eq!(receiver.events()[2]["event"], "test");
}

#[test]
fn notifier_mistakes_are_refused_and_notifiers_are_listed_and_removed() {
    let dir = StateDir::new();
    for (args, says) in [
        (
            vec!["bad name", "--url", "http://127.0.0.1/"],
            "invalid notifier name",
        ),
        (
            vec!["ops", "--url", "ftp://example/"],
            "is not an http:// or https:// URL",
        ),
    ] {
        let mut all = vec!["notify", "add"];
        all.extend(args);
        let out = dir.run(&all);
        assert_eq!(out.status.code(), Some(65), "{}", text(&out.stderr));
        assert!(text(&out.stderr).contains(says), "{}", text(&out.stderr));
    }
    let out = dir.run(&[
        "notify",
        "add",
        "ops",
        "--url",
        "http://x/",
        "--event",
        "boom",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(json(&dir, &["notify", "ls"]), serde_json::json!([]));
    let added = json(
        &dir,
        &[
            "notify",
            "add",
            "ops",
            "--url",
            "https://ntfy.example/stead",
        ],
    );
    assert_eq!(
        added["delivers"],
        serde_json::json!(["failed", "not_resumed", "overdue"])
    );
    // Nothing listens there: the test says so and exits 1.
    let down = Receiver::down();
    json(&dir, &["notify", "add", "local", "--url", &down.url()]);
    let out = dir.run(&["notify", "test", "local"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stdout).contains("not delivered to local"),
        "{}",
        text(&out.stdout)
    );
    let removed = json(&dir, &["notify", "rm", "ops"]);
    assert_eq!(removed["name"], "ops");
    let out = dir.run(&["notify", "rm", "ops"]);
    assert!(!out.status.success());
    assert!(text(&out.stderr).contains("ops"), "{}", text(&out.stderr));
}

/// HMAC-SHA256 of `message` under `key`, in hex, by `openssl dgst`: the server's
/// signature is checked against an implementation it does not share.
fn hmac_sha256_hex(key: &str, message: &[u8]) -> String {
    use std::io::Write;
    let mut child = std::process::Command::new("openssl")
        .args(["dgst", "-sha256", "-hmac", key])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("openssl runs");
    child.stdin.take().unwrap().write_all(message).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    // `SHA2-256(stdin)= HEX`
    text(&out.stdout)
        .rsplit(' ')
        .next()
        .unwrap()
        .trim()
        .to_string()
}
