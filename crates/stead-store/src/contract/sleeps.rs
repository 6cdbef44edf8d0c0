//! The contract of sleeps and overdue lapses: a sleep is listed and counted into the
//! runs it fell into, and a lapse is written once, with its event, until a success
//! ends it.

use stead_core::sleep::{Slept, Step};
use stead_protocol::{NotifierSpec, NotifyEvent};

use super::*;
use crate::NewSleep;

pub(super) fn a_sleep_is_listed_and_counted_into_the_runs_it_fell_into(s: &Subject) {
    let l = serve(s);
    let job = l.job("j", Concurrency::Allow);
    let run = |started: i64, ended: Option<i64>| {
        let id = l.queue(&job);
        assert!(l.store.mark_running(id, 1, &me(), t(started)).unwrap());
        if let Some(ended) = ended {
            l.store.finish(id, &RunEnd::exited(0, t(ended))).unwrap();
        }
        id
    };
    // The machine slept from 100 to 200 (noticed at 200).
    let through = run(10, None);
    let ended_after = run(20, Some(300));
    let ended_before = run(30, Some(50));
    let started_after = run(250, None);
    // Holds: one live when the sleep began, one wedged before it.
    let hold = |name: &str, expires: i64| StoredHold {
        name: name.into(),
        service: "stead".into(),
        acquired_at: t(0),
        expires_at: t(expires),
    };
    l.store.hold_upsert(&hold("live", 150), l.epoch).unwrap();
    l.store.hold_upsert(&hold("wedged", 90), l.epoch).unwrap();
    let sleep = NewSleep::of(
        "m",
        "laptop",
        &Slept {
            started_at: t(100),
            ended_at: t(200),
            duration: std::time::Duration::from_secs(100),
        },
        Some(Step::Back(std::time::Duration::from_secs(3))),
    );
    let (id, runs) = l.store.sleep_record(&sleep, l.epoch).unwrap();
    assert_eq!(runs, 2);
    let slept = |id| l.store.run_get(id).unwrap().unwrap().slept_ms;
    assert_eq!(
        [through, ended_after, ended_before, started_after].map(slept),
        [100_000, 100_000, 0, 0]
    );
    // A hold's owner slept as long as the machine did.
    let expiry = |name: &str| {
        l.store
            .hold_list()
            .unwrap()
            .into_iter()
            .find(|h| h.name == name)
            .unwrap()
            .expires_at
    };
    assert_eq!((expiry("live"), expiry("wedged")), (t(250), t(90)));
    // Another host's sleep is not this host's runs'.
    let elsewhere = NewSleep {
        machine_id: "other".into(),
        ..sleep.clone()
    };
    assert_eq!(l.store.sleep_record(&elsewhere, l.epoch).unwrap().1, 0);
    let listed = l.store.sleep_list(None).unwrap();
    assert_eq!(listed.len(), 2);
    let mine = listed.iter().find(|s| s.id == id).unwrap();
    assert_eq!(
        (
            mine.host.as_str(),
            mine.started_at.as_str(),
            mine.ended_at.as_str(),
            mine.duration_ms,
            mine.wall_set_ms
        ),
        (
            "laptop",
            stead_core::clock::rfc3339(t(100)).as_str(),
            stead_core::clock::rfc3339(t(200)).as_str(),
            100_000,
            Some(-3_000)
        )
    );
    assert_eq!(listed[0].machine_id, "other", "newest first");
    assert_eq!(l.store.sleep_list(Some(1)).unwrap().len(), 1);
    // A sleep is written by the host's current server only.
    assert!(matches!(
        l.store.sleep_record(&sleep, l.epoch - 1),
        Err(StoreError::Refused(Refusal::Fenced { .. }))
    ));
}

pub(super) fn an_overdue_lapse_is_told_once_and_ended_by_a_success(s: &Subject) {
    let (l, leader) = lead(s);
    let spec = JobSpec {
        expect_within: Some("1h".into()),
        ..spec("daily", Concurrency::Allow)
    };
    let job = l.store.job_insert(&spec, now(), l.epoch).unwrap();
    l.store
        .job_insert(&spec_named("carefree"), now(), l.epoch)
        .unwrap();
    let notifier = |name: &str, events: Vec<NotifyEvent>| NotifierSpec {
        name: name.into(),
        url: format!("http://127.0.0.1:9/{name}"),
        events,
        jobs: Vec::new(),
        sign: false,
    };
    l.store
        .notifier_set(&notifier("default", Vec::new()), now(), l.epoch)
        .unwrap();
    l.store
        .notifier_set(
            &notifier("recoveries", vec![NotifyEvent::Recovered]),
            now(),
            l.epoch,
        )
        .unwrap();
    // Not yet due: an hour after it was added.
    assert!(l.store.overdue_check(t(3599), leader).unwrap().is_empty());
    assert_eq!(
        l.store.overdue_check(t(3700), leader).unwrap(),
        [("daily".to_string(), t(3600))]
    );
    // Once per lapse, however often it is checked, by whichever handle.
    assert!(l.store.overdue_check(t(3800), leader).unwrap().is_empty());
    assert!(s.open().overdue_check(t(9000), leader).unwrap().is_empty());
    let stored = l.store.job_get("daily").unwrap().unwrap();
    assert_eq!(stored.overdue_since, Some(t(3600)));
    let events = |l: &Server<'_>| -> Vec<(String, String)> {
        let mut all: Vec<_> = l
            .store
            .outbox_due(t(99_999))
            .unwrap()
            .into_iter()
            .map(|row| {
                let body: serde_json::Value = serde_json::from_str(&row.payload).unwrap();
                (row.notifier, body["event"].as_str().unwrap().to_string())
            })
            .collect();
        all.sort();
        all
    };
    assert_eq!(events(&l), [("default".into(), "overdue".into())]);
    // The next success ends the lapse, and the notifier that asks hears of it.
    let id = l.queue(&job);
    l.store.mark_running(id, 1, &me(), t(9000)).unwrap();
    l.store.finish(id, &RunEnd::exited(0, t(9100))).unwrap();
    assert_eq!(
        l.store.job_get("daily").unwrap().unwrap().overdue_since,
        None
    );
    assert_eq!(
        events(&l),
        [
            ("default".into(), "overdue".into()),
            ("recoveries".into(), "recovered".into())
        ]
    );
    // The next lapse is counted from that success.
    assert!(
        l.store
            .overdue_check(t(9100 + 3599), leader)
            .unwrap()
            .is_empty()
    );
    // Checking is the scheduler leader's work.
    assert!(matches!(
        l.store.overdue_check(t(9100 + 3600), leader - 1),
        Err(StoreError::Refused(Refusal::Fenced { .. }))
    ));
    assert_eq!(
        l.store.overdue_check(t(9100 + 3600), leader).unwrap(),
        [("daily".to_string(), t(9100 + 3600))]
    );
}

fn spec_named(name: &str) -> JobSpec {
    spec(name, Concurrency::Allow)
}
