//! The contract of what follows a run's end, in the transaction that records it: a
//! failure's retry, a success's chained runs, the events notifiers are told of; and how
//! waiting runs are handed over once, and events delivered in order.

use stead_protocol::{NotifierSpec, NotifyEvent, QueueSpec};

use super::*;

impl Server<'_> {
    /// Admits an on-demand run of `job` (whose plan carries the job's retry budget) and
    /// marks it running.
    fn running_with_retries(&self, job: &StoredJob) -> i64 {
        let id = self
            .store
            .run_admit(
                &new_run(job, Trigger::OnDemand, None),
                &job.spec,
                &planner(),
                self.epoch,
            )
            .unwrap()
            .run
            .id;
        assert!(self.store.mark_running(id, 1, &me(), now()).unwrap());
        id
    }

    fn notifier(&self, name: &str, events: Vec<NotifyEvent>, jobs: Vec<String>) {
        let spec = NotifierSpec {
            name: name.into(),
            url: format!("http://127.0.0.1:9/{name}"),
            events,
            jobs,
            sign: false,
        };
        self.store.notifier_set(&spec, now(), self.epoch).unwrap();
    }

    /// The events now due, as (notifier, event) pairs.
    fn due(&self) -> Vec<(String, String)> {
        self.store
            .outbox_due(t(3600))
            .unwrap()
            .into_iter()
            .map(|row| {
                let body: serde_json::Value = serde_json::from_str(&row.payload).unwrap();
                (row.notifier, body["event"].as_str().unwrap().to_string())
            })
            .collect()
    }
}

fn with_retries(name: &str, retries: u32) -> JobSpec {
    JobSpec {
        retries,
        retry_delay: Some("10s".into()),
        ..spec(name, Concurrency::Forbid)
    }
}

pub(super) fn a_failure_with_retries_left_writes_its_retry_with_it(s: &Subject) {
    let l = serve(s);
    let job = l
        .store
        .job_insert(&with_retries("a", 1), now(), l.epoch)
        .unwrap();
    let first = l.running_with_retries(&job);
    assert!(l.store.finish(first, &RunEnd::exited(2, t(5))).unwrap());
    let failed = l.store.run_get(first).unwrap().unwrap();
    let retry_id = failed
        .followed_by
        .expect("the retry is written with the failure");
    let retry = l.store.run_get(retry_id).unwrap().unwrap();
    assert_eq!(
        (retry.trigger, retry.status, retry.attempt, retry.parent_id),
        (Trigger::Retry, RunStatus::Queued, 2, Some(first))
    );
    assert_eq!(retry.idempotency_key, failed.idempotency_key);
    // Its delay (10 s, within 20 % either way) from the failure's end.
    let not_before: Timestamp = retry.not_before.as_deref().unwrap().parse().unwrap();
    let waited = not_before.duration_since(t(5)).as_millis();
    assert!((8_000..=12_000).contains(&waited), "{waited} ms");
    assert!(
        retry
            .waiting
            .as_deref()
            .unwrap()
            .starts_with("its retry delay, until ")
    );
    // Handed over once, whoever asks.
    let waiting = l.store.runs_waiting("m").unwrap();
    assert_eq!(waiting.iter().map(|w| w.id).collect::<Vec<_>>(), [retry_id]);
    assert!(waiting[0].plan.as_ref().unwrap().retry_follows().is_none());
    assert!(l.store.run_release(retry_id, "b2", None, l.epoch).unwrap());
    assert!(!l.store.run_release(retry_id, "b2", None, l.epoch).unwrap());
    assert!(l.store.runs_waiting("m").unwrap().is_empty());
    // The last attempt fails: nothing follows it.
    assert!(l.store.mark_running(retry_id, 2, &me(), now()).unwrap());
    assert!(l.store.finish(retry_id, &RunEnd::exited(2, t(20))).unwrap());
    assert_eq!(
        l.store.run_get(retry_id).unwrap().unwrap().followed_by,
        None
    );
    assert_eq!(l.all_runs().len(), 2);
}

pub(super) fn a_cut_is_never_retried(s: &Subject) {
    let l = serve(s);
    let job = l
        .store
        .job_insert(&with_retries("a", 3), now(), l.epoch)
        .unwrap();
    let id = l.running_with_retries(&job);
    assert!(
        l.store
            .run_settle(id, &cut("its monitor is gone"), l.epoch)
            .unwrap()
    );
    let run = l.store.run_get(id).unwrap().unwrap();
    assert_eq!(
        (run.status, run.followed_by),
        (RunStatus::Interrupted, None)
    );
    assert!(l.store.runs_waiting("m").unwrap().is_empty());
}

pub(super) fn a_success_writes_a_waiting_run_of_each_enabled_downstream_job(s: &Subject) {
    let l = serve(s);
    let up = l.job("up", Concurrency::Forbid);
    l.job("upper", Concurrency::Forbid);
    // A name that merely contains the upstream's is not it.
    let elsewhere = JobSpec {
        after: vec!["upper".into()],
        ..spec("elsewhere", Concurrency::Forbid)
    };
    l.store.job_insert(&elsewhere, now(), l.epoch).unwrap();
    for (name, enabled) in [("down", true), ("off", false)] {
        let spec = JobSpec {
            after: vec!["up".into()],
            enabled,
            ..spec(name, Concurrency::Forbid)
        };
        l.store.job_insert(&spec, now(), l.epoch).unwrap();
    }
    // A failure starts nothing downstream.
    let failed = l.queue(&up);
    l.store.mark_running(failed, 1, &me(), now()).unwrap();
    l.store.finish(failed, &RunEnd::exited(1, t(1))).unwrap();
    assert_eq!(l.all_runs().len(), 1);

    let ok = l.queue(&up);
    l.store.mark_running(ok, 1, &me(), now()).unwrap();
    l.store.finish(ok, &RunEnd::exited(0, t(2))).unwrap();
    let runs = l.all_runs();
    let after: Vec<_> = runs
        .iter()
        .filter(|r| r.trigger == Trigger::After)
        .collect();
    assert_eq!(after.len(), 1, "{runs:?}");
    assert_eq!(
        (after[0].job.as_str(), after[0].parent_id, after[0].status),
        ("down", Some(ok), RunStatus::Queued)
    );
    assert!(after[0].waiting.is_some());
    // It waits without a plan: the server that hands it over makes one from its job.
    let waiting = l.store.runs_waiting("m").unwrap();
    assert_eq!(waiting.len(), 1);
    assert!(waiting[0].plan.is_none());

    // While the downstream job is paused, a success passes it over, saying why.
    l.store
        .job_set_paused("down", Some(t(100)), now(), l.epoch)
        .unwrap();
    let again = l.queue(&up);
    l.store.mark_running(again, 1, &me(), now()).unwrap();
    l.store.finish(again, &RunEnd::exited(0, t(3))).unwrap();
    let passed = l
        .all_runs()
        .into_iter()
        .find(|r| r.parent_id == Some(again))
        .expect("a row for the chained run");
    assert_eq!(passed.status, RunStatus::Skipped);
    assert_eq!(
        passed.reason.as_deref(),
        Some(format!(
            "not run after run {again} of up: the job is paused until 2027-01-15T08:01:40.000Z"
        ))
        .as_deref()
    );
}

pub(super) fn events_are_written_with_their_outcome_for_the_notifiers_that_listen(s: &Subject) {
    // Delivering is the scheduler leader's work on a shared ledger.
    let (l, leader) = lead(s);
    let job = l.job("j", Concurrency::Allow);
    l.notifier("all", Vec::new(), Vec::new());
    l.notifier("recoveries", vec![NotifyEvent::Recovered], vec!["j".into()]);
    l.notifier("elsewhere", vec![NotifyEvent::Failed], vec!["other".into()]);
    for code in [3, 4] {
        let id = l.queue(&job);
        l.store.mark_running(id, 1, &me(), now()).unwrap();
        l.store.finish(id, &RunEnd::exited(code, t(1))).unwrap();
    }
    let ok = l.queue(&job);
    l.store.mark_running(ok, 1, &me(), now()).unwrap();
    l.store.finish(ok, &RunEnd::exited(0, t(2))).unwrap();
    // Each notifier's oldest undelivered event is due; the next waits for it.
    assert_eq!(
        l.due(),
        [
            ("all".to_string(), "failed".to_string()),
            ("recoveries".to_string(), "recovered".to_string()),
        ]
    );
    let rows = l.store.outbox_due(t(3600)).unwrap();
    let head = rows.iter().find(|r| r.notifier == "all").unwrap();
    l.store
        .outbox_attempted(head.id, &Ok(t(3)), leader)
        .unwrap();
    let rows = l.store.outbox_due(t(3600)).unwrap();
    let next = rows.iter().find(|r| r.notifier == "all").unwrap();
    assert_ne!(next.event_id, head.event_id);
    let body: serde_json::Value = serde_json::from_str(&next.payload).unwrap();
    assert_eq!(
        (body["event"].as_str(), body["run"]["exit_code"].as_i64()),
        (Some("failed"), Some(4))
    );
    // A failed attempt waits until its next time; then it is due again, as it was.
    l.store
        .outbox_attempted(next.id, &Err(("refused".into(), t(600))), leader)
        .unwrap();
    assert!(
        l.store
            .outbox_due(t(599))
            .unwrap()
            .iter()
            .all(|r| r.notifier != "all")
    );
    // The earliest attempt due is the recovery's, written when its run ended.
    assert_eq!(l.store.outbox_next().unwrap(), Some(t(2)));
    let recovery = rows.iter().find(|r| r.notifier == "recoveries").unwrap();
    l.store
        .outbox_attempted(recovery.id, &Ok(t(4)), leader)
        .unwrap();
    // Then the refused one's: what waits behind it waits for it.
    assert_eq!(l.store.outbox_next().unwrap(), Some(t(600)));
    let report = l.store.notifier_report().unwrap();
    let (_, stats) = report.iter().find(|(n, _)| n.name == "all").unwrap();
    assert_eq!((stats.pending, stats.delivered), (1, 1));
    assert_eq!(stats.last_error.as_deref(), Some("refused"));
    // Removing a notifier drops what it was not delivered.
    l.store.notifier_remove("all", l.epoch).unwrap();
    assert!(l.due().is_empty());
    assert_eq!(l.store.outbox_next().unwrap(), None);
}

pub(super) fn queue_loads_count_handed_over_and_waiting_runs(s: &Subject) {
    let l = serve(s);
    let queue = QueueSpec {
        name: "gpu".into(),
        parallel: 1,
    };
    l.store.queue_set(&queue, now(), l.epoch).unwrap();
    let spec = JobSpec {
        queue: Some("gpu".into()),
        ..spec("render", Concurrency::Allow)
    };
    let job = l.store.job_insert(&spec, now(), l.epoch).unwrap();
    let ids: Vec<i64> = (0..3)
        .map(|_| {
            let new = NewRun {
                waiting: true,
                ..new_run(&job, Trigger::OnDemand, None)
            };
            l.admit(&new).unwrap().run.id
        })
        .collect();
    assert!(l.store.run_release(ids[0], "b", None, l.epoch).unwrap());
    let loads = l.store.queue_loads("m").unwrap();
    let gpu = loads
        .iter()
        .find(|q| q.queue.as_deref() == Some("gpu"))
        .unwrap();
    assert_eq!((gpu.running, gpu.waiting), (1, 2));
    let waiting = l.store.runs_waiting("m").unwrap();
    assert_eq!(waiting.iter().map(|w| w.id).collect::<Vec<_>>(), ids[1..]);
    assert_eq!(waiting[0].queue.as_deref(), Some("gpu"));
    // A waiting run cancelled is no longer waiting.
    let cancel = RunEnd::with_reason(RunStatus::Cancelled, "cancelled before it started", now());
    assert!(l.store.run_settle_queued(ids[2], &cancel, l.epoch).unwrap());
    let cancelled = l.store.run_get(ids[2]).unwrap().unwrap();
    assert_eq!(
        (cancelled.status, cancelled.waiting),
        (RunStatus::Cancelled, None)
    );
    let waiting = l.store.runs_waiting("m").unwrap();
    assert_eq!(waiting.iter().map(|w| w.id).collect::<Vec<_>>(), [ids[1]]);
    // A queue a job names cannot be removed.
    assert!(matches!(
        l.store.queue_remove("gpu", l.epoch),
        Err(StoreError::Refused(Refusal::QueueInUse { .. }))
    ));
}

pub(super) fn a_run_closed_by_its_receipt_starts_what_runs_after_it(s: &Subject) {
    let l = serve(s);
    let up = l.job("up", Concurrency::Forbid);
    let down = JobSpec {
        after: vec!["up".into()],
        ..spec("down", Concurrency::Forbid)
    };
    l.store.job_insert(&down, now(), l.epoch).unwrap();
    let cut = l.interrupted(&up);
    // The cut starts nothing; the receipt proving the work landed does.
    assert_eq!(l.all_runs().len(), 1);
    assert!(l.store.run_land(cut, t(9), l.epoch).unwrap());
    let after: Vec<_> = l
        .all_runs()
        .into_iter()
        .filter(|r| r.trigger == Trigger::After)
        .collect();
    assert_eq!(after.len(), 1);
    assert_eq!(after[0].parent_id, Some(cut));
    assert_eq!(after[0].created_at, "2027-01-15T08:00:09.000Z");
}
