//! The contract of the run ledger: admission, transitions, listings, debts and resumes.

use super::*;

pub(super) fn a_run_moves_queued_running_succeeded_once(s: &Subject) {
    let l = serve(s);
    let j = l.job("a", Concurrency::Forbid);
    let adm = l.admit(&new_run(&j, Trigger::OnDemand, None)).unwrap();
    let id = adm.run.id;
    assert_eq!(adm.run.status, RunStatus::Queued);
    assert_eq!(adm.run.idempotency_key, format!("a#{id}"));
    assert_eq!(
        adm.run.log_path,
        logs().join(format!("{id}.log")).to_str().unwrap()
    );
    assert_eq!(adm.plan.unwrap().log_path, logs().join(format!("{id}.log")));
    assert!(adm.replaced.is_empty());
    assert!(l.store.mark_running(id, 1, &me(), now()).unwrap());
    assert!(!l.store.mark_running(id, 1, &me(), now()).unwrap());
    assert_eq!(l.store.run(id).unwrap().unwrap().monitor_pid, Some(1));
    assert!(l.store.finish(id, &RunEnd::exited(0, t(1))).unwrap());
    assert!(!l.store.finish(id, &RunEnd::exited(1, t(2))).unwrap());
    let run = l.store.run_get(id).unwrap().unwrap();
    assert_eq!(run.status, RunStatus::Succeeded);
    assert_eq!(run.exit_code, Some(0));
    assert_eq!(run.started_at.as_deref(), Some("2027-01-15T08:00:00.000Z"));
    assert_eq!(run.ended_at.as_deref(), Some("2027-01-15T08:00:01.000Z"));
    assert_eq!(run.created_at, "2027-01-15T08:00:00.000Z");
    assert_eq!(
        (run.job.as_str(), run.trigger, run.attempt, run.parent_id),
        ("a", Trigger::OnDemand, 1, None)
    );
    assert_eq!((run.machine_id.as_str(), run.boot_id.as_str()), ("m", "b"));
}

pub(super) fn a_cancel_before_start_wins_over_the_monitor(s: &Subject) {
    let l = serve(s);
    let j = l.job("a", Concurrency::Forbid);
    let id = l.queue(&j);
    let cancel = RunEnd::with_reason(RunStatus::Cancelled, "cancelled before it started", now());
    assert!(l.store.run_settle(id, &cancel, l.epoch).unwrap());
    // The monitor comes up afterwards: it must not start the command.
    assert!(!l.store.mark_running(id, 1, &me(), now()).unwrap());
    assert_eq!(l.status(id), RunStatus::Cancelled);
}

pub(super) fn a_monitor_that_finishes_first_beats_a_reconciling_server(s: &Subject) {
    let l = serve(s);
    let j = l.job("a", Concurrency::Forbid);
    let id = l.queue(&j);
    l.store.mark_running(id, 1, &me(), now()).unwrap();
    assert!(l.store.finish(id, &RunEnd::exited(3, now())).unwrap());
    assert!(
        !l.store
            .run_settle(id, &cut("monitor gone"), l.epoch)
            .unwrap()
    );
    let run = l.store.run_get(id).unwrap().unwrap();
    assert_eq!(run.status, RunStatus::Failed);
    assert_eq!(run.reason.as_deref(), Some("exited with code 3"));
}

pub(super) fn a_server_that_settles_first_keeps_its_outcome(s: &Subject) {
    let l = serve(s);
    let j = l.job("a", Concurrency::Forbid);
    let id = l.queue(&j);
    l.store.mark_running(id, 1, &me(), now()).unwrap();
    assert!(
        l.store
            .run_settle(id, &cut("monitor gone"), l.epoch)
            .unwrap()
    );
    assert!(!l.store.finish(id, &RunEnd::exited(0, now())).unwrap());
    assert_eq!(l.status(id), RunStatus::Interrupted);
}

pub(super) fn a_cancel_before_start_never_overwrites_a_run_that_just_started(s: &Subject) {
    let l = serve(s);
    let j = l.job("a", Concurrency::Forbid);
    let id = l.queue(&j);
    // The monitor marks it running between the canceller's read and its write.
    assert!(l.store.mark_running(id, 1, &me(), now()).unwrap());
    let cancel = RunEnd::with_reason(RunStatus::Cancelled, "cancelled before it started", now());
    assert!(!l.store.run_settle_queued(id, &cancel, l.epoch).unwrap());
    assert_eq!(l.status(id), RunStatus::Running);
    // Before the monitor, it wins.
    let queued = l.queue(&l.job("b", Concurrency::Forbid));
    assert!(l.store.run_settle_queued(queued, &cancel, l.epoch).unwrap());
    assert_eq!(l.status(queued), RunStatus::Cancelled);
}

pub(super) fn forbid_skips_replace_hands_back_the_old_and_allow_admits_both(s: &Subject) {
    let l = serve(s);
    let f = l.job("f", Concurrency::Forbid);
    let first = l.queue(&f);
    let second = l.admit(&new_run(&f, Trigger::OnDemand, None)).unwrap();
    assert_eq!(second.run.status, RunStatus::Skipped);
    assert!(second.plan.is_none());
    assert!(second.run.ended_at.is_some());
    assert_eq!(
        second.run.reason.as_deref(),
        Some(
            format!("overlap: run {first} of this job is still queued (concurrency = forbid)")
                .as_str()
        )
    );

    let r = l.job("r", Concurrency::Replace);
    let old = l.queue(&r);
    l.store.mark_running(old, 7, &me(), now()).unwrap();
    let new = l.admit(&new_run(&r, Trigger::OnDemand, None)).unwrap();
    assert_eq!(new.run.status, RunStatus::Queued);
    assert_eq!(new.replaced.len(), 1);
    let replaced = &new.replaced[0];
    assert_eq!(
        (replaced.id, replaced.status, replaced.monitor.clone()),
        (old, RunStatus::Running, Some((7, me())))
    );
    assert_eq!((replaced.job.as_str(), replaced.epoch), ("r", l.epoch));

    let a = l.job("a", Concurrency::Allow);
    l.queue(&a);
    let both = l.admit(&new_run(&a, Trigger::OnDemand, None)).unwrap();
    assert_eq!(both.run.status, RunStatus::Queued);
    assert!(both.replaced.is_empty());
}

pub(super) fn a_fire_is_recorded_once_and_advances_fired_through(s: &Subject) {
    let l = serve(s);
    let j = l.job("cron", Concurrency::Allow);
    let at = now() + SignedDuration::from_secs(60);
    let run = l
        .admit(&new_run(&j, Trigger::Scheduled, Some(at)))
        .unwrap()
        .run;
    assert_eq!(run.idempotency_key, "cron@2027-01-15T08:01:00.000Z");
    assert_eq!(
        run.scheduled_at.as_deref(),
        Some("2027-01-15T08:01:00.000Z")
    );
    assert_eq!(
        l.store.job_get("cron").unwrap().unwrap().fired_through,
        Some(at)
    );
    // The same fire again, as a catch-up or a scheduled run: refused by the ledger.
    assert!(l.admit(&new_run(&j, Trigger::CatchUp, Some(at))).is_err());
    assert!(l.admit(&new_run(&j, Trigger::Scheduled, Some(at))).is_err());
    assert_eq!(l.all_runs().len(), 1);
    // Another job's fire at the same time is its own.
    let other = l.job("other", Concurrency::Allow);
    l.admit(&new_run(&other, Trigger::Scheduled, Some(at)))
        .unwrap();
    // On-demand runs are not fires.
    l.queue(&j);
    l.queue(&j);
    assert_eq!(l.all_runs().len(), 4);
}

pub(super) fn fired_through_only_moves_forward(s: &Subject) {
    let l = serve(s);
    let j = l.job("cron", Concurrency::Allow);
    let later = now() + SignedDuration::from_secs(120);
    let earlier = now() + SignedDuration::from_secs(60);
    l.admit(&new_run(&j, Trigger::Scheduled, Some(later)))
        .unwrap();
    // A late writer of an earlier fire never makes handled fires due again.
    l.admit(&new_run(&j, Trigger::CatchUp, Some(earlier)))
        .unwrap();
    assert_eq!(
        l.store.job_get("cron").unwrap().unwrap().fired_through,
        Some(later)
    );
}

pub(super) fn a_passed_over_fire_is_recorded_skipped(s: &Subject) {
    let l = serve(s);
    let j = l.job("cron", Concurrency::Allow);
    let at = now() - SignedDuration::from_hours(7);
    let passed = NewRun {
        skip_reason: Some("fires not run: 3 missed more than 6h ago: history, not debt".into()),
        ..new_run(&j, Trigger::CatchUp, Some(at))
    };
    let adm = l.admit(&passed).unwrap();
    assert_eq!(adm.run.status, RunStatus::Skipped);
    assert_eq!(adm.run.reason, passed.skip_reason);
    assert_eq!(
        adm.run.ended_at.as_deref(),
        Some("2027-01-15T08:00:00.000Z")
    );
    assert!(adm.plan.is_none());
    assert_eq!(
        l.store.job_get("cron").unwrap().unwrap().fired_through,
        Some(at)
    );
    // The passed-over fire is handled: it cannot be run after all.
    assert!(l.admit(&new_run(&j, Trigger::CatchUp, Some(at))).is_err());
}

/// A catch-up run for fire `at` carrying the `n` earlier minutely fires as coalesced.
fn catch_up_with_coalesced(j: &StoredJob, at: Timestamp, n: i64) -> NewRun {
    NewRun {
        skipped_fires: (1..=n)
            .rev()
            .map(|k| {
                SkippedFire::one(
                    at - SignedDuration::from_mins(k),
                    Trigger::CatchUp,
                    NotRun::Coalesced,
                )
            })
            .collect(),
        ..new_run(j, Trigger::CatchUp, Some(at))
    }
}

pub(super) fn every_fire_not_run_gets_a_row_naming_the_catch_up_run(s: &Subject) {
    let l = serve(s);
    let j = l.job("tick", Concurrency::Forbid);
    let at = now() - SignedDuration::from_secs(30);
    let adm = l.admit(&catch_up_with_coalesced(&j, at, 29)).unwrap();
    let id = adm.run.id;
    assert_eq!(
        adm.run.status,
        RunStatus::Queued,
        "the catch-up itself runs"
    );
    assert_eq!(adm.skipped.len(), 29);
    let runs = l.all_runs();
    assert_eq!(runs.len(), 30);
    let mut times: Vec<&str> = runs
        .iter()
        .map(|r| r.scheduled_at.as_deref().unwrap())
        .collect();
    times.sort();
    times.dedup();
    assert_eq!(times.len(), 30, "no scheduled time twice");
    for run in runs.iter().filter(|r| r.id != id) {
        assert_eq!(
            (run.status, run.trigger),
            (RunStatus::Skipped, Trigger::CatchUp)
        );
        assert_eq!(
            run.reason.as_deref(),
            Some(
                format!("fire not run: coalesced into catch-up run {id} (catch_up = once)")
                    .as_str()
            )
        );
        assert!(run.ended_at.is_some());
        assert_eq!(
            run.idempotency_key,
            format!("tick@{}", run.scheduled_at.as_deref().unwrap())
        );
    }
    assert_eq!(
        l.store.job_get("tick").unwrap().unwrap().fired_through,
        Some(at)
    );
    // `--no-skipped` leaves them out, in SQL (the limit counts only what is shown).
    let shown = l
        .store
        .run_list(&RunFilter {
            no_skipped: true,
            limit: Some(1),
            ..Default::default()
        })
        .unwrap();
    assert_eq!(shown.iter().map(|r| r.id).collect::<Vec<_>>(), [id]);
    let skipped_only = l
        .store
        .run_list(&RunFilter {
            status: Some(RunStatus::Skipped),
            no_skipped: true,
            ..Default::default()
        })
        .unwrap();
    assert!(skipped_only.is_empty());
    // A fire of the pass cannot be recorded again, as a run or a row.
    let again = at - SignedDuration::from_mins(3);
    assert!(
        l.admit(&new_run(&j, Trigger::Scheduled, Some(again)))
            .is_err()
    );
    assert_eq!(l.all_runs().len(), 30);
}

pub(super) fn a_pass_at_the_row_cap_is_one_transaction(s: &Subject) {
    use stead_core::jobs::timing::MAX_SKIPPED_ROWS;
    let l = serve(s);
    let j = l.job("tick", Concurrency::Allow);
    let at = now() - SignedDuration::from_secs(30);
    let n = i64::try_from(MAX_SKIPPED_ROWS).unwrap();
    let adm = l.admit(&catch_up_with_coalesced(&j, at, n)).unwrap();
    assert_eq!(adm.skipped.len(), MAX_SKIPPED_ROWS);
    assert_eq!(l.all_runs().len(), MAX_SKIPPED_ROWS + 1);
    assert_eq!(
        l.store.job_get("tick").unwrap().unwrap().fired_through,
        Some(at)
    );
}

pub(super) fn a_pass_meeting_a_recorded_fire_writes_nothing(s: &Subject) {
    let l = serve(s);
    let j = l.job("tick", Concurrency::Allow);
    let at = now() - SignedDuration::from_secs(30);
    // One of the fires the pass would skip is on the ledger already.
    let recorded = at - SignedDuration::from_mins(4);
    l.admit(&NewRun {
        fired_through: None,
        ..new_run(&j, Trigger::Scheduled, Some(recorded))
    })
    .unwrap();
    assert!(l.admit(&catch_up_with_coalesced(&j, at, 10)).is_err());
    // The whole pass was undone: no catch-up run, no skipped row, fired_through unmoved.
    assert_eq!(l.all_runs().len(), 1);
    assert_eq!(
        l.store.job_get("tick").unwrap().unwrap().fired_through,
        None
    );
}

pub(super) fn a_passed_over_row_carries_the_other_fires_not_run(s: &Subject) {
    let l = serve(s);
    let j = l.job("tick", Concurrency::Allow);
    let at = now() - SignedDuration::from_secs(30);
    // catch_up = skip: nothing runs; the latest fire's row carries the others.
    let skip = |k: i64| {
        SkippedFire::one(
            at - SignedDuration::from_mins(k),
            Trigger::CatchUp,
            NotRun::Skip,
        )
    };
    let reason = skip(0).reason(None);
    let adm = l
        .admit(&NewRun {
            skip_reason: Some(reason.clone()),
            skipped_fires: (1..=4).rev().map(skip).collect(),
            ..new_run(&j, Trigger::CatchUp, Some(at))
        })
        .unwrap();
    assert_eq!(adm.run.status, RunStatus::Skipped);
    assert_eq!(adm.skipped.len(), 4);
    let runs = l.all_runs();
    assert_eq!(runs.len(), 5);
    assert!(runs.iter().all(|r| r.status == RunStatus::Skipped
        && r.reason.as_deref() == Some(reason.as_str())));
    assert!(
        l.store
            .run_list(&RunFilter {
                no_skipped: true,
                ..Default::default()
            })
            .unwrap()
            .is_empty()
    );
}

pub(super) fn keys_and_original_triggers_are_kept(s: &Subject) {
    let l = serve(s);
    let j = l.job("a", Concurrency::Allow);
    let keyed = NewRun {
        idempotency_key: Some("deploy-42".into()),
        ..new_run(&j, Trigger::OnDemand, None)
    };
    assert_eq!(l.admit(&keyed).unwrap().run.idempotency_key, "deploy-42");
    let resume = NewRun {
        original_trigger: Some(Trigger::Scheduled),
        parent_id: Some(l.queue(&j)),
        attempt: 2,
        ..new_run(&j, Trigger::Resume, None)
    };
    let run = l.admit(&resume).unwrap().run;
    assert_eq!(
        (
            run.trigger,
            run.original_trigger,
            run.attempt,
            run.parent_id
        ),
        (
            Trigger::Resume,
            Some(Trigger::Scheduled),
            2,
            resume.parent_id
        )
    );
}

pub(super) fn active_runs_are_this_machines_and_listing_filters(s: &Subject) {
    let l = serve(s);
    let j = l.job("a", Concurrency::Allow);
    let mine = l.queue(&j);
    let mut other = new_run(&j, Trigger::OnDemand, None);
    other.machine_id = "elsewhere".into();
    l.admit(&other).unwrap();
    let ended = l.queue(&j);
    l.store.run_settle(ended, &cut("cut"), l.epoch).unwrap();
    let active = l.store.runs_active("m").unwrap();
    assert_eq!(active.iter().map(|r| r.id).collect::<Vec<_>>(), [mine]);
    assert_eq!(
        (active[0].machine_id.as_str(), active[0].boot_id.as_str()),
        ("m", "b")
    );
    assert_eq!(active[0].monitor, None);
    let queued = l
        .store
        .run_list(&RunFilter {
            status: Some(RunStatus::Queued),
            limit: Some(1),
            ..Default::default()
        })
        .unwrap();
    assert_eq!(queued.len(), 1);
    assert!(queued[0].id > mine, "newest first");
}

pub(super) fn listings_filter_page_and_limit(s: &Subject) {
    let l = serve(s);
    let a = l.job("a", Concurrency::Allow);
    let b = l.job("b", Concurrency::Allow);
    let mut ids = Vec::new();
    for i in 0..60 {
        ids.push(l.queue(if i % 3 == 0 { &b } else { &a }));
    }
    for id in ids.iter().step_by(4) {
        l.store
            .run_settle(*id, &RunEnd::exited(1, now()), l.epoch)
            .unwrap();
    }
    let list = |filter: RunFilter| -> Vec<i64> {
        l.store
            .run_list(&filter)
            .unwrap()
            .into_iter()
            .map(|r| r.id)
            .collect()
    };
    let newest_first: Vec<i64> = ids.iter().rev().copied().collect();
    // 50 by default, newest first.
    assert_eq!(list(RunFilter::default()), newest_first[..50]);
    assert_eq!(
        list(RunFilter {
            limit: Some(1_000_000),
            ..Default::default()
        }),
        newest_first
    );
    assert!(
        list(RunFilter {
            limit: Some(0),
            ..Default::default()
        })
        .is_empty()
    );
    // Paging: each page starts below the last id of the one before.
    let page = |before_id: Option<i64>| {
        list(RunFilter {
            limit: Some(25),
            before_id,
            ..Default::default()
        })
    };
    let first = page(None);
    let second = page(first.last().copied());
    let third = page(second.last().copied());
    assert_eq!([first, second, third].concat(), newest_first);

    let of_b: Vec<i64> = newest_first
        .iter()
        .copied()
        .filter(|id| (ids.iter().position(|x| x == id).unwrap()) % 3 == 0)
        .collect();
    assert_eq!(
        list(RunFilter {
            job: Some("b".into()),
            ..Default::default()
        }),
        of_b
    );
    let failed: Vec<i64> = ids.iter().step_by(4).rev().copied().collect();
    assert_eq!(
        list(RunFilter {
            status: Some(RunStatus::Failed),
            ..Default::default()
        }),
        failed
    );
    let failed_b: Vec<i64> = failed
        .iter()
        .copied()
        .filter(|id| of_b.contains(id))
        .collect();
    assert_eq!(
        list(RunFilter {
            job: Some("b".into()),
            status: Some(RunStatus::Failed),
            before_id: Some(ids[59]),
            limit: Some(100),
            no_skipped: false,
        }),
        failed_b
    );
    assert!(
        list(RunFilter {
            job: Some("c".into()),
            ..Default::default()
        })
        .is_empty()
    );
}

pub(super) fn runs_are_counted_by_job_status_trigger_and_debt(s: &Subject) {
    let l = serve(s);
    let a = l.job("a", Concurrency::Allow);
    let b = l.job("b", Concurrency::Allow);
    for _ in 0..2 {
        let id = l.queue(&a);
        l.store.mark_running(id, 1, &me(), now()).unwrap();
        l.store.finish(id, &RunEnd::exited(0, now())).unwrap();
    }
    let owed = l.interrupted(&a);
    let settled = l.interrupted(&a);
    l.store
        .run_resolve(settled, "not resumed: test", now(), l.epoch)
        .unwrap();
    l.admit(&new_run(&b, Trigger::Scheduled, Some(now())))
        .unwrap();
    assert!(l.store.runs_owed("m").unwrap().iter().any(|r| r.id == owed));
    let count = |job: &str, status, trigger, resolved, count| RunCount {
        job: job.into(),
        status,
        trigger,
        resolved,
        count,
    };
    let mut counts = l.store.run_counts().unwrap();
    counts.sort_by_key(|c| (c.job.clone(), c.status.as_str(), c.resolved));
    assert_eq!(
        counts,
        [
            count("a", RunStatus::Interrupted, Trigger::OnDemand, false, 1),
            count("a", RunStatus::Interrupted, Trigger::OnDemand, true, 1),
            count("a", RunStatus::Succeeded, Trigger::OnDemand, false, 2),
            count("b", RunStatus::Queued, Trigger::Scheduled, false, 1),
        ]
    );
}

pub(super) fn settle_all_ends_only_runs_in_flight(s: &Subject) {
    let l = serve(s);
    let j = l.job("a", Concurrency::Allow);
    let queued = l.queue(&j);
    let running = l.queue(&j);
    l.store.mark_running(running, 1, &me(), now()).unwrap();
    let done = l.queue(&j);
    l.store.mark_running(done, 1, &me(), now()).unwrap();
    l.store.finish(done, &RunEnd::exited(0, now())).unwrap();
    let reboot = cut("interrupted: the machine rebooted while it ran");
    let ends = [queued, running, done].map(|id| (id, reboot.clone()));
    assert_eq!(
        l.store.run_settle_all(&ends, l.epoch).unwrap(),
        [queued, running]
    );
    assert_eq!(l.status(queued), RunStatus::Interrupted);
    assert_eq!(l.status(running), RunStatus::Interrupted);
    assert_eq!(l.status(done), RunStatus::Succeeded);
    assert!(l.store.run_settle_all(&ends, l.epoch).unwrap().is_empty());
    assert!(l.store.runs_active("m").unwrap().is_empty());
}

pub(super) fn an_owed_run_is_resolved_once(s: &Subject) {
    let l = serve(s);
    let j = l.job("a", Concurrency::Allow);
    let first = l.interrupted(&j);
    let second = l.interrupted(&j);
    let done = l.queue(&j);
    let owed = |machine: &str| -> Vec<i64> {
        l.store
            .runs_owed(machine)
            .unwrap()
            .into_iter()
            .map(|r| r.id)
            .collect()
    };
    assert_eq!(owed("m"), [first, second]);
    assert!(owed("elsewhere").is_empty());
    assert!(
        l.store
            .run_resolve(first, "not resumed: resume = false", t(5), l.epoch)
            .unwrap()
    );
    assert!(
        !l.store
            .run_resolve(first, "not resumed: again", t(6), l.epoch)
            .unwrap()
    );
    assert_eq!(
        l.store
            .run_get(first)
            .unwrap()
            .unwrap()
            .resolution
            .as_deref(),
        Some("not resumed: resume = false")
    );
    // Only an interrupted run owes anything.
    assert!(
        !l.store
            .run_resolve(done, "not resumed", t(5), l.epoch)
            .unwrap()
    );
    assert_eq!(owed("m"), [second]);
}

pub(super) fn a_landed_run_succeeds_once(s: &Subject) {
    let l = serve(s);
    let j = l.job("a", Concurrency::Allow);
    let id = l.interrupted(&j);
    assert!(l.store.run_land(id, t(9), l.epoch).unwrap());
    assert!(!l.store.run_land(id, t(9), l.epoch).unwrap());
    let run = l.store.run_get(id).unwrap().unwrap();
    assert_eq!(run.status, RunStatus::Succeeded);
    assert_eq!(run.reason.as_deref(), Some("landed, proven by receipt"));
    assert_eq!(run.resolution, run.reason);
    assert!(l.store.runs_owed("m").unwrap().is_empty());
    // A resolved debt cannot land afterwards.
    let resolved = l.interrupted(&j);
    l.store
        .run_resolve(resolved, "not resumed", now(), l.epoch)
        .unwrap();
    assert!(!l.store.run_land(resolved, now(), l.epoch).unwrap());
    assert_eq!(l.status(resolved), RunStatus::Interrupted);
}

pub(super) fn a_resume_settles_its_parents_debt_once(s: &Subject) {
    let l = serve(s);
    let j = l.job("a", Concurrency::Allow);
    let parent = l.interrupted(&j);
    let resumed = l.admit(&resume_of(&j, parent, None)).unwrap().run;
    assert_eq!(resumed.status, RunStatus::Queued);
    assert_eq!(
        l.store.run_get(parent).unwrap().unwrap().resolution,
        Some(format!("resumed as run {}", resumed.id))
    );
    // A second server (or boot) resuming the same run finds it settled, its row undone.
    let before = l.all_runs().len();
    assert!(matches!(
        l.admit(&resume_of(&j, parent, None)),
        Err(StoreError::Refused(Refusal::AlreadyResolved(id))) if id == parent
    ));
    assert_eq!(l.all_runs().len(), before);

    let noted = l.interrupted(&j);
    let run = l
        .admit(&resume_of(&j, noted, Some("the landed check exited 1")))
        .unwrap()
        .run;
    assert_eq!(
        l.store.run_get(noted).unwrap().unwrap().resolution,
        Some(format!(
            "resumed as run {} (the landed check exited 1)",
            run.id
        ))
    );
}

pub(super) fn a_resume_waits_for_an_overlap_rather_than_skip(s: &Subject) {
    let l = serve(s);
    let j = l.job("a", Concurrency::Forbid);
    let parent = l.interrupted(&j);
    let busy = l.queue(&j);
    let before = l.all_runs().len();
    assert!(matches!(
        l.admit(&resume_of(&j, parent, None)),
        Err(StoreError::Refused(Refusal::Overlap(id))) if id == busy
    ));
    assert_eq!(l.all_runs().len(), before);
    assert_eq!(
        l.store
            .runs_owed("m")
            .unwrap()
            .iter()
            .map(|r| r.id)
            .collect::<Vec<_>>(),
        [parent]
    );
}

pub(super) fn a_failure_during_a_restart_is_a_cut(s: &Subject) {
    let l = serve(s);
    for name in ["cache", "db"] {
        l.store
            .service_insert(&service(name), now(), l.epoch)
            .unwrap();
    }
    let mut dependent = spec("x", Concurrency::Allow);
    dependent.depends_on = vec!["db".into(), "cache".into()];
    let j = l.store.job_insert(&dependent, now(), l.epoch).unwrap();
    let start = |l: &Server<'_>| {
        let id = l.queue(&j);
        assert!(l.store.mark_running(id, 1, &me(), now()).unwrap());
        id
    };
    let failing = start(&l);
    let succeeding = start(&l);
    assert_eq!(l.store.restarting_service(failing).unwrap(), None);
    for name in ["cache", "db"] {
        l.store
            .service_set_restarting(name, Some(now()), l.epoch)
            .unwrap();
    }
    // The first of its services in depends_on order is named.
    assert_eq!(
        l.store.restarting_service(failing).unwrap().as_deref(),
        Some("db")
    );
    assert!(l.store.finish(failing, &RunEnd::exited(1, now())).unwrap());
    let run = l.store.run_get(failing).unwrap().unwrap();
    assert_eq!(run.status, RunStatus::Interrupted);
    assert_eq!(
        run.reason.as_deref(),
        Some("interrupted: its service db was being restarted (exited with code 1)")
    );
    assert_eq!(run.exit_code, Some(1));
    assert!(
        l.store
            .finish(succeeding, &RunEnd::exited(0, now()))
            .unwrap()
    );
    assert_eq!(l.status(succeeding), RunStatus::Succeeded);

    for name in ["cache", "db"] {
        l.store.service_set_restarting(name, None, l.epoch).unwrap();
    }
    let after = start(&l);
    assert!(l.store.finish(after, &RunEnd::exited(1, now())).unwrap());
    assert_eq!(l.status(after), RunStatus::Failed);
}

pub(super) fn unknown_names_and_ids_are_reported(s: &Subject) {
    let l = serve(s);
    let none = 999;
    assert_eq!(l.store.run_get(none).unwrap(), None);
    assert_eq!(l.store.run(none).unwrap(), None);
    assert!(!l.store.mark_running(none, 1, &me(), now()).unwrap());
    assert!(l.store.finish(none, &RunEnd::exited(0, now())).is_err());
    assert!(l.store.restarting_service(none).is_err());
    assert!(!l.store.run_settle(none, &cut("cut"), l.epoch).unwrap());
    assert!(
        !l.store
            .run_settle_queued(none, &cut("cut"), l.epoch)
            .unwrap()
    );
    assert!(
        !l.store
            .run_resolve(none, "not resumed", now(), l.epoch)
            .unwrap()
    );
    assert!(!l.store.run_land(none, now(), l.epoch).unwrap());
    l.store.run_request_cancel(none, now(), l.epoch).unwrap();
    assert!(matches!(
        l.store.service_set_restarting("db", Some(now()), l.epoch),
        Err(StoreError::Refused(Refusal::NoSuchService(name))) if name == "db"
    ));
    assert!(matches!(
        l.store.service_remove("db", l.epoch),
        Err(StoreError::Refused(Refusal::NoSuchService(name))) if name == "db"
    ));
    assert!(matches!(
        l.store.hold_remove("h", l.epoch),
        Err(StoreError::Refused(Refusal::NoSuchHold(name))) if name == "h"
    ));
}

pub(super) fn a_run_taken_ahead_and_stopped_before_its_instant_ends_where_it_started(s: &Subject) {
    let l = serve(s);
    let j = l.job("a", Concurrency::Forbid);
    let id = l.queue(&j);
    // Marked ahead of its instant, t(10); cut before it, at t(5), by whoever does not
    // know when (or whether) its command started: its server, its monitor gone.
    assert!(l.store.mark_running(id, 1, &me(), t(10)).unwrap());
    let cut = RunEnd::with_reason(RunStatus::Interrupted, "its monitor is gone", t(5));
    assert!(l.store.finish(id, &cut).unwrap());
    let run = l.store.run_get(id).unwrap().unwrap();
    assert_eq!(run.started_at, run.ended_at, "{run:?}");
    // A run that ended after its start keeps both as they were.
    let other = l.queue(&j);
    assert!(l.store.mark_running(other, 1, &me(), t(1)).unwrap());
    assert!(l.store.finish(other, &RunEnd::exited(0, t(2))).unwrap());
    let run = l.store.run_get(other).unwrap().unwrap();
    assert_eq!(run.started_at.as_deref(), Some("2027-01-15T08:00:01.000Z"));
    assert_eq!(run.ended_at.as_deref(), Some("2027-01-15T08:00:02.000Z"));
}

pub(super) fn a_monitors_end_records_when_the_command_started(s: &Subject) {
    let l = serve(s);
    let j = l.job("a", Concurrency::Allow);
    // Marked with its instant, t(10); its command spawned late, at t(12).
    let late = l.queue(&j);
    assert!(l.store.mark_running(late, 1, &me(), t(10)).unwrap());
    let end = RunEnd {
        started: CommandStart::At(t(12)),
        ..RunEnd::exited(0, t(20))
    };
    assert!(l.store.finish(late, &end).unwrap());
    let run = l.store.run_get(late).unwrap().unwrap();
    assert_eq!(run.started_at.as_deref(), Some("2027-01-15T08:00:12.000Z"));
    assert_eq!(run.ended_at.as_deref(), Some("2027-01-15T08:00:20.000Z"));
    // Cancelled while it waited for its instant: its command never started.
    let never = l.queue(&j);
    assert!(l.store.mark_running(never, 1, &me(), t(10)).unwrap());
    let cancel = RunEnd {
        started: CommandStart::Never,
        ..RunEnd::with_reason(RunStatus::Cancelled, "cancelled before it started", t(5))
    };
    assert!(l.store.finish(never, &cancel).unwrap());
    let run = l.store.run_get(never).unwrap().unwrap();
    assert_eq!(run.started_at, None, "{run:?}");
    assert_eq!(run.ended_at.as_deref(), Some("2027-01-15T08:00:05.000Z"));
    // An end that does not say keeps the mark.
    let marked = l.queue(&j);
    assert!(l.store.mark_running(marked, 1, &me(), t(10)).unwrap());
    assert!(l.store.finish(marked, &RunEnd::exited(1, t(11))).unwrap());
    let run = l.store.run_get(marked).unwrap().unwrap();
    assert_eq!(run.started_at.as_deref(), Some("2027-01-15T08:00:10.000Z"));
    // An end that lost its race corrects nothing.
    let again = RunEnd {
        started: CommandStart::At(t(1)),
        ..RunEnd::exited(0, t(30))
    };
    assert!(!l.store.finish(late, &again).unwrap());
    let run = l.store.run_get(late).unwrap().unwrap();
    assert_eq!(run.started_at.as_deref(), Some("2027-01-15T08:00:12.000Z"));
}
