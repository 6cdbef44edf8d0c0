//! Ledger transitions, including the races between a monitor's writes, a cancel and a
//! reconciling server: each run ends exactly once.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use jiff::{SignedDuration, Timestamp};
use stead_protocol::{Concurrency, JobSpec, RunFilter, RunStatus, Trigger};

use super::SqliteStore;
use crate::lifecycle::identity;
use crate::lifecycle::lease::{ClaimOutcome, Claimant};
use crate::runs::{MonitorPlan, RunEnd, RunRecorder};
use crate::store::{NewRun, Store, StoreError, StoredJob};

struct Ledger {
    _dir: tempfile::TempDir,
    store: SqliteStore,
    epoch: i64,
    logs: PathBuf,
}

fn now() -> Timestamp {
    Timestamp::from_second(1_800_000_000).unwrap()
}

fn ledger() -> Ledger {
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteStore::open(&dir.path().join("stead.db")).unwrap();
    let claimant = Claimant::new("s".into(), std::process::id(), identity::current().unwrap());
    let ClaimOutcome::Claimed(lease) = store
        .claim_lease(&claimant, now(), SignedDuration::from_secs(30), None)
        .unwrap()
    else {
        panic!("fresh ledger is claimable")
    };
    let logs = dir.path().join("logs");
    Ledger {
        _dir: dir,
        store,
        epoch: lease.epoch,
        logs,
    }
}

fn job(l: &Ledger, name: &str, concurrency: Concurrency) -> StoredJob {
    let spec = JobSpec {
        name: name.into(),
        cron: None,
        tz: None,
        every: None,
        command: vec!["true".into()],
        shell: false,
        cwd: None,
        env: BTreeMap::new(),
        timeout: None,
        concurrency,
        enabled: true,
        ..JobSpec::default()
    };
    l.store.job_insert(&spec, now(), l.epoch).unwrap()
}

fn new_run(job: &StoredJob, trigger: Trigger, scheduled_at: Option<Timestamp>) -> NewRun {
    NewRun {
        scheduled_at,
        fired_through: scheduled_at,
        ..NewRun::of(job, trigger, "m", "b", now())
    }
}

fn plan(id: i64, log: &Path, _key: &str) -> MonitorPlan {
    MonitorPlan {
        run_id: id,
        ledger: PathBuf::new(),
        argv: vec!["true".into()],
        cwd: None,
        env: BTreeMap::new(),
        timeout_ms: None,
        kill_grace_ms: 0,
        log_path: log.to_path_buf(),
        log_max_bytes: 0,
        alternatives: Vec::new(),
        on_failure: None,
    }
}

fn admit(l: &Ledger, new: &NewRun) -> Result<crate::store::Admission, StoreError> {
    l.store.run_admit(new, &l.logs, &plan, l.epoch)
}

fn status(l: &Ledger, id: i64) -> RunStatus {
    l.store.run_get(id).unwrap().unwrap().status
}

fn me() -> identity::StartIdentity {
    identity::current().unwrap()
}

#[test]
fn a_run_moves_queued_running_succeeded_once() {
    let l = ledger();
    let j = job(&l, "a", Concurrency::Forbid);
    let adm = admit(&l, &new_run(&j, Trigger::OnDemand, None)).unwrap();
    let id = adm.run.id;
    assert_eq!(adm.run.status, RunStatus::Queued);
    assert_eq!(adm.run.idempotency_key, format!("a#{id}"));
    assert_eq!(adm.plan.unwrap().log_path, l.logs.join(format!("{id}.log")));
    assert!(l.store.mark_running(id, 1, &me(), now()).unwrap());
    assert!(!l.store.mark_running(id, 1, &me(), now()).unwrap());
    assert!(l.store.finish(id, &RunEnd::exited(0, now())).unwrap());
    assert!(!l.store.finish(id, &RunEnd::exited(1, now())).unwrap());
    let run = l.store.run_get(id).unwrap().unwrap();
    assert_eq!(run.status, RunStatus::Succeeded);
    assert_eq!(run.exit_code, Some(0));
    assert!(run.started_at.is_some() && run.ended_at.is_some());
}

#[test]
fn a_cancel_before_start_wins_over_the_monitor() {
    let l = ledger();
    let j = job(&l, "a", Concurrency::Forbid);
    let id = admit(&l, &new_run(&j, Trigger::OnDemand, None))
        .unwrap()
        .run
        .id;
    let cancel = RunEnd::with_reason(RunStatus::Cancelled, "cancelled before it started", now());
    assert!(l.store.run_settle(id, &cancel, l.epoch).unwrap());
    // The monitor comes up afterwards: it must not start the command.
    assert!(!l.store.mark_running(id, 1, &me(), now()).unwrap());
    assert_eq!(status(&l, id), RunStatus::Cancelled);
}

#[test]
fn a_monitor_that_finishes_first_beats_a_reconciling_server() {
    let l = ledger();
    let j = job(&l, "a", Concurrency::Forbid);
    let id = admit(&l, &new_run(&j, Trigger::OnDemand, None))
        .unwrap()
        .run
        .id;
    l.store.mark_running(id, 1, &me(), now()).unwrap();
    assert!(l.store.finish(id, &RunEnd::exited(3, now())).unwrap());
    let cut = RunEnd::with_reason(RunStatus::Interrupted, "monitor gone", now());
    assert!(!l.store.run_settle(id, &cut, l.epoch).unwrap());
    assert_eq!(status(&l, id), RunStatus::Failed);
}

#[test]
fn a_server_that_settles_first_keeps_its_outcome() {
    let l = ledger();
    let j = job(&l, "a", Concurrency::Forbid);
    let id = admit(&l, &new_run(&j, Trigger::OnDemand, None))
        .unwrap()
        .run
        .id;
    l.store.mark_running(id, 1, &me(), now()).unwrap();
    let cut = RunEnd::with_reason(RunStatus::Interrupted, "monitor gone", now());
    assert!(l.store.run_settle(id, &cut, l.epoch).unwrap());
    assert!(!l.store.finish(id, &RunEnd::exited(0, now())).unwrap());
    assert_eq!(status(&l, id), RunStatus::Interrupted);
}

#[test]
fn forbid_skips_replace_hands_back_the_old_and_allow_admits_both() {
    let l = ledger();
    let f = job(&l, "f", Concurrency::Forbid);
    let first = admit(&l, &new_run(&f, Trigger::OnDemand, None))
        .unwrap()
        .run
        .id;
    let second = admit(&l, &new_run(&f, Trigger::OnDemand, None)).unwrap();
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

    let r = job(&l, "r", Concurrency::Replace);
    let old = admit(&l, &new_run(&r, Trigger::OnDemand, None))
        .unwrap()
        .run
        .id;
    let new = admit(&l, &new_run(&r, Trigger::OnDemand, None)).unwrap();
    assert_eq!(new.run.status, RunStatus::Queued);
    assert_eq!(new.replaced.iter().map(|a| a.id).collect::<Vec<_>>(), [old]);

    let a = job(&l, "a", Concurrency::Allow);
    admit(&l, &new_run(&a, Trigger::OnDemand, None)).unwrap();
    let both = admit(&l, &new_run(&a, Trigger::OnDemand, None)).unwrap();
    assert_eq!(both.run.status, RunStatus::Queued);
    assert!(both.replaced.is_empty());
}

#[test]
fn a_fire_is_recorded_once_and_advances_fired_through() {
    let l = ledger();
    let j = job(&l, "cron", Concurrency::Allow);
    let at = now() + SignedDuration::from_secs(60);
    let run = admit(&l, &new_run(&j, Trigger::Scheduled, Some(at)))
        .unwrap()
        .run;
    assert_eq!(run.idempotency_key, "cron@2027-01-15T08:01:00.000Z");
    assert_eq!(
        l.store.job_get("cron").unwrap().unwrap().fired_through,
        Some(at)
    );
    // The same fire again, as a catch-up or a scheduled run: refused by the ledger.
    assert!(admit(&l, &new_run(&j, Trigger::CatchUp, Some(at))).is_err());
    assert!(admit(&l, &new_run(&j, Trigger::Scheduled, Some(at))).is_err());
    let runs = l.store.run_list(&RunFilter::default()).unwrap();
    assert_eq!(runs.len(), 1);
}

#[test]
fn a_superseded_server_writes_nothing() {
    let l = ledger();
    let j = job(&l, "a", Concurrency::Allow);
    let stale = NewRun {
        ..new_run(&j, Trigger::OnDemand, None)
    };
    let err = l
        .store
        .run_admit(&stale, &l.logs, &plan, l.epoch - 1)
        .unwrap_err();
    assert!(matches!(err, StoreError::Fenced { .. }), "{err}");
    assert!(l.store.run_list(&RunFilter::default()).unwrap().is_empty());
    assert!(matches!(
        l.store.job_remove("a", l.epoch + 1).unwrap_err(),
        StoreError::Fenced { .. }
    ));
}

#[test]
fn active_runs_are_this_machines_and_listing_filters() {
    let l = ledger();
    let j = job(&l, "a", Concurrency::Allow);
    let mine = admit(&l, &new_run(&j, Trigger::OnDemand, None))
        .unwrap()
        .run
        .id;
    let mut other = new_run(&j, Trigger::OnDemand, None);
    other.machine_id = "elsewhere".into();
    admit(&l, &other).unwrap();
    let active = l.store.runs_active("m").unwrap();
    assert_eq!(active.iter().map(|r| r.id).collect::<Vec<_>>(), [mine]);
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

#[test]
fn filtered_listings_use_their_indexes() {
    let l = ledger();
    let conn = l.store.conn();
    for (filter, index) in [
        (
            RunFilter {
                job: Some("a".into()),
                ..Default::default()
            },
            "runs_by_job",
        ),
        (
            RunFilter {
                status: Some(RunStatus::Failed),
                limit: Some(5),
                ..Default::default()
            },
            "runs_by_status",
        ),
    ] {
        let (sql, values) = super::runs::list_query(&filter);
        let mut stmt = conn.prepare(&format!("EXPLAIN QUERY PLAN {sql}")).unwrap();
        let plan: Vec<String> = stmt
            .query_map(rusqlite::params_from_iter(values), |r| r.get(3))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        assert!(plan.iter().any(|p| p.contains(index)), "{plan:?}");
    }
}

#[test]
fn a_cancel_before_start_never_overwrites_a_run_that_just_started() {
    let l = ledger();
    let j = job(&l, "a", Concurrency::Forbid);
    let id = admit(&l, &new_run(&j, Trigger::OnDemand, None))
        .unwrap()
        .run
        .id;
    // The monitor marks it running between the canceller's read and its write.
    assert!(l.store.mark_running(id, 1, &me(), now()).unwrap());
    let cancel = RunEnd::with_reason(RunStatus::Cancelled, "cancelled before it started", now());
    assert!(!l.store.run_settle_queued(id, &cancel, l.epoch).unwrap());
    assert_eq!(status(&l, id), RunStatus::Running);
}
