//! The contract of fencing and races: every server write carries its epoch, and racing
//! writers leave one outcome.

use super::*;

/// Everything a server can write, as read back.
type Snapshot = (
    Vec<StoredJob>,
    Vec<stead_core::records::StoredService>,
    Vec<StoredHold>,
    Vec<stead_protocol::Run>,
);

fn snapshot(l: &Server<'_>) -> Snapshot {
    (
        l.store.job_list().unwrap(),
        l.store.service_list().unwrap(),
        l.store.hold_list().unwrap(),
        l.all_runs(),
    )
}

pub(super) fn every_server_write_is_fenced(s: &Subject) {
    let l = serve(s);
    let j = l.job("a", Concurrency::Replace);
    l.store
        .service_insert(&service("db"), now(), l.epoch)
        .unwrap();
    let hold = StoredHold {
        name: "h".into(),
        service: "db".into(),
        acquired_at: now(),
        expires_at: t(60),
    };
    l.store.hold_upsert(&hold, l.epoch).unwrap();
    let owed = l.interrupted(&j);
    let queued = l.queue(&j);
    let before = snapshot(&l);
    let lease = l.store.lease_row().unwrap();
    let changes = Changes {
        create_jobs: vec![spec("b", Concurrency::Allow)],
        ..Changes::default()
    };
    let end = RunEnd::exited(0, now());
    for stale in [l.epoch - 1, l.epoch + 1] {
        let writes: Vec<(&str, Result<(), StoreError>)> = vec![
            (
                "job_insert",
                l.store
                    .job_insert(&spec("b", Concurrency::Allow), now(), stale)
                    .map(drop),
            ),
            (
                "job_update",
                l.store
                    .job_update(&spec("a", Concurrency::Allow), true, t(1), stale)
                    .map(drop),
            ),
            ("job_remove", l.store.job_remove("a", stale).map(drop)),
            ("apply", l.store.apply(&changes, now(), stale)),
            (
                "run_admit",
                l.store
                    .run_admit(
                        &new_run(&j, Trigger::OnDemand, None),
                        &plain_spec(),
                        &planner(),
                        stale,
                    )
                    .map(drop),
            ),
            (
                "run_admit (a resume)",
                l.store
                    .run_admit(&resume_of(&j, owed, None), &plain_spec(), &planner(), stale)
                    .map(drop),
            ),
            (
                "run_settle",
                l.store.run_settle(queued, &end, stale).map(drop),
            ),
            (
                "run_settle_queued",
                l.store.run_settle_queued(queued, &end, stale).map(drop),
            ),
            (
                "run_settle_all",
                l.store
                    .run_settle_all(&[(queued, end.clone())], stale)
                    .map(drop),
            ),
            (
                "run_request_cancel",
                l.store.run_request_cancel(queued, now(), stale),
            ),
            (
                "run_resolve",
                l.store
                    .run_resolve(owed, "not resumed", now(), stale)
                    .map(drop),
            ),
            ("run_land", l.store.run_land(owed, now(), stale).map(drop)),
            (
                "service_insert",
                l.store
                    .service_insert(&service("cache"), now(), stale)
                    .map(drop),
            ),
            (
                "service_remove",
                l.store.service_remove("db", stale).map(drop),
            ),
            (
                "service_set_restarting",
                l.store.service_set_restarting("db", Some(now()), stale),
            ),
            (
                "hold_upsert",
                l.store
                    .hold_upsert(
                        &StoredHold {
                            expires_at: t(600),
                            ..hold.clone()
                        },
                        stale,
                    )
                    .map(drop),
            ),
            ("hold_remove", l.store.hold_remove("h", stale).map(drop)),
        ];
        for (write, result) in writes {
            assert!(
                matches!(result, Err(StoreError::Refused(Refusal::Fenced { epoch })) if epoch == stale),
                "{write} with epoch {stale}: {result:?}"
            );
        }
        assert_eq!(snapshot(&l), before);
        assert_eq!(l.store.lease_row().unwrap(), lease);
        assert!(l.store.services_restarting().unwrap().is_empty());
    }
    // The current epoch still writes.
    assert!(l.store.run_settle_queued(queued, &end, l.epoch).unwrap());
    assert!(l.store.run_land(owed, now(), l.epoch).unwrap());
}

pub(super) fn a_newer_claim_fences_the_older_server(s: &Subject) {
    let first = claim(&*s.store, &claimant("a"), t(0));
    let job = s
        .store
        .job_insert(&spec("a", Concurrency::Allow), now(), first.epoch)
        .unwrap();
    // Another process takes the lease over through its own connection (its owner was
    // proven dead).
    let other = s.open();
    let second = take_over(&*other, &claimant("b"));
    assert_eq!(second.epoch, first.epoch + 1);
    assert!(matches!(
        s.store.run_admit(
            &new_run(&job, Trigger::OnDemand, None),
            &plain_spec(),
            &planner(),
            first.epoch
        ),
        Err(StoreError::Refused(Refusal::Fenced { .. }))
    ));
    assert!(matches!(
        s.store.job_remove("a", first.epoch),
        Err(StoreError::Refused(Refusal::Fenced { .. }))
    ));
    assert!(matches!(
        s.store.renew_lease(&first, t(32), TTL).unwrap(),
        RenewOutcome::Superseded(row) if row.owned_by(&second)
    ));
    // The new server writes, through either connection.
    let admitted = s
        .store
        .run_admit(
            &new_run(&job, Trigger::OnDemand, None),
            &plain_spec(),
            &planner(),
            second.epoch,
        )
        .unwrap();
    assert_eq!(
        other.run_get(admitted.run.id).unwrap().unwrap().status,
        RunStatus::Queued
    );
    other.job_remove("a", second.epoch).unwrap();
}

pub(super) fn monitors_write_whoever_serves(s: &Subject) {
    let l = serve(s);
    let j = l.job("a", Concurrency::Allow);
    let id = l.queue(&j);
    // The server is superseded (its successor took the lease over): the run's monitor
    // still records its run.
    take_over(l.store, &claimant("b"));
    assert!(l.store.mark_running(id, 1, &me(), now()).unwrap());
    assert!(l.store.finish(id, &RunEnd::exited(0, now())).unwrap());
    assert_eq!(l.status(id), RunStatus::Succeeded);
}

pub(super) fn racing_admissions_queue_one_run_of_a_forbid_job(s: &Subject) {
    let l = serve(s);
    let j = l.job("a", Concurrency::Forbid);
    let statuses = race(s, 6, |h| {
        h.run_admit(
            &new_run(&j, Trigger::OnDemand, None),
            &plain_spec(),
            &planner(),
            l.epoch,
        )
        .unwrap()
        .run
        .status
    });
    let queued = statuses
        .iter()
        .filter(|&&st| st == RunStatus::Queued)
        .count();
    assert_eq!(queued, 1, "{statuses:?}");
    assert_eq!(l.store.runs_active("m").unwrap().len(), 1);
}

pub(super) fn racing_resumes_settle_a_debt_once(s: &Subject) {
    let l = serve(s);
    let j = l.job("a", Concurrency::Allow);
    let parent = l.interrupted(&j);
    let results = race(s, 6, |h| {
        h.run_admit(
            &resume_of(&j, parent, None),
            &plain_spec(),
            &planner(),
            l.epoch,
        )
        .map(|adm| adm.run.id)
    });
    let won: Vec<i64> = results
        .iter()
        .filter_map(|r| r.as_ref().ok().copied())
        .collect();
    assert_eq!(won.len(), 1, "{results:?}");
    assert!(
        results.iter().all(|r| matches!(
            r,
            Ok(_) | Err(StoreError::Refused(Refusal::AlreadyResolved(_)))
        )),
        "{results:?}"
    );
    assert_eq!(
        l.store.run_get(parent).unwrap().unwrap().resolution,
        Some(format!("resumed as run {}", won[0]))
    );
    let resumes = l
        .all_runs()
        .into_iter()
        .filter(|r| r.trigger == Trigger::Resume)
        .count();
    assert_eq!(resumes, 1);
}

pub(super) fn racing_fires_record_one_run(s: &Subject) {
    let l = serve(s);
    let j = l.job("cron", Concurrency::Allow);
    let at = now() + SignedDuration::from_secs(60);
    let results = race(s, 6, |h| {
        h.run_admit(
            &new_run(&j, Trigger::Scheduled, Some(at)),
            &plain_spec(),
            &planner(),
            l.epoch,
        )
        .map(drop)
    });
    assert_eq!(
        results.iter().filter(|r| r.is_ok()).count(),
        1,
        "{results:?}"
    );
    assert_eq!(l.all_runs().len(), 1);
    assert_eq!(
        l.store.job_get("cron").unwrap().unwrap().fired_through,
        Some(at)
    );
}
