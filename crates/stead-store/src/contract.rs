//! The store contract: what every ledger backend must do, as tests written once over
//! [`Store`] and [`RunRecorder`] and run against each backend (`contract::sqlite::*`,
//! `contract::postgres::*`).
//!
//! Each test gets a ledger of its own: SQLite in a temporary directory, PostgreSQL in a
//! fresh database (`stead_t_PID_N`) created through the admin URL in `STEAD_TEST_PG_URL`
//! (default `postgres://postgres@127.0.0.1:5432/test`), collating in English rather
//! than bytewise, and dropped when the test ends, passed or failed. Without a PostgreSQL
//! server the PostgreSQL tests fail, saying how to start one: a skipped backend would
//! pass unnoticed.

use std::any::Any;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Barrier;

use jiff::{SignedDuration, Timestamp};
use stead_protocol::{Concurrency, JobSpec, RunFilter, RunStatus, ServiceSpec, Trigger};

use stead_core::clock::from_ms;
use stead_core::identity;
use stead_core::lease::{self, ClaimOutcome, Claimant, HeldLease, LeaseRow, RenewOutcome};
use stead_core::locator::StoreLocator;
use stead_core::records::{Admission, Changes, NewRun, RunCount, StoredHold, StoredJob};
use stead_core::runs::{MonitorPlan, RunEnd};
use stead_protocol::limits::MAX_RUN_LIST;

#[cfg(feature = "postgres")]
use crate::postgres::PgStore;
#[cfg(feature = "postgres")]
pub(crate) use crate::postgres::scratch::ScratchDb;
use crate::sqlite::SqliteStore;
use crate::{RunRecorder, Store, StoreError};

/// A backend under test: the server's store and a monitor's recorder in one.
pub trait Ledger: Store + RunRecorder {}
impl<T: Store + RunRecorder> Ledger for T {}

/// A ledger under test, and how to open another handle on it (another process's view).
pub struct Subject {
    store: Box<dyn Ledger>,
    open: Box<dyn Fn() -> Box<dyn Ledger>>,
    /// What keeps the ledger alive (a directory, a scratch database); dropped last.
    _keep: Box<dyn Any>,
}

impl Subject {
    fn open(&self) -> Box<dyn Ledger> {
        (self.open)()
    }
}

fn sqlite() -> Subject {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("stead.db");
    let open = move || -> Box<dyn Ledger> { Box::new(SqliteStore::open(&path).unwrap()) };
    Subject {
        store: open(),
        open: Box::new(open),
        _keep: Box::new(dir),
    }
}

#[cfg(feature = "postgres")]
fn postgres() -> Subject {
    let db = ScratchDb::create();
    let url = db.url.clone();
    let open = move || -> Box<dyn Ledger> { Box::new(PgStore::connect(&url, "m").unwrap()) };
    Subject {
        store: open(),
        open: Box::new(open),
        _keep: Box::new(db),
    }
}

macro_rules! contract {
    ($($name:ident),* $(,)?) => {
        mod sqlite {
            $(#[test] fn $name() { super::$name(&super::sqlite()) })*
        }
        #[cfg(feature = "postgres")]
        mod postgres {
            $(#[test] fn $name() { super::$name(&super::postgres()) })*
        }
    };
}

contract![
    a_fresh_ledger_has_an_unclaimed_lease,
    claim_bumps_the_epoch_and_refuses_a_live_lease,
    a_dead_owner_is_taken_over_only_while_the_row_is_unchanged,
    expired_but_ours_re_arms,
    renewal_after_supersession_fails,
    renewal_with_a_wrong_token_fails,
    renewal_after_release_fails_and_release_frees_at_once,
    two_handles_see_one_lease,
    racing_claimants_elect_one,
    jobs_are_inserted_listed_updated_and_removed,
    a_removed_jobs_id_is_never_given_again,
    apply_is_all_or_nothing,
    apply_updates_services_and_jobs,
    a_run_moves_queued_running_succeeded_once,
    a_cancel_before_start_wins_over_the_monitor,
    a_monitor_that_finishes_first_beats_a_reconciling_server,
    a_server_that_settles_first_keeps_its_outcome,
    a_cancel_before_start_never_overwrites_a_run_that_just_started,
    forbid_skips_replace_hands_back_the_old_and_allow_admits_both,
    a_fire_is_recorded_once_and_advances_fired_through,
    fired_through_only_moves_forward,
    a_passed_over_fire_is_recorded_skipped,
    keys_and_original_triggers_are_kept,
    active_runs_are_this_machines_and_listing_filters,
    listings_filter_page_and_limit,
    runs_are_counted_by_job_status_trigger_and_debt,
    settle_all_ends_only_runs_in_flight,
    an_owed_run_is_resolved_once,
    a_landed_run_succeeds_once,
    a_resume_settles_its_parents_debt_once,
    a_resume_waits_for_an_overlap_rather_than_skip,
    a_failure_during_a_restart_is_a_cut,
    unknown_names_and_ids_are_reported,
    services_are_inserted_listed_and_removed,
    holds_renew_keeping_their_first_acquisition,
    every_server_write_is_fenced,
    a_newer_claim_fences_the_older_server,
    monitors_write_whoever_serves,
    racing_admissions_queue_one_run_of_a_forbid_job,
    racing_resumes_settle_a_debt_once,
    racing_fires_record_one_run,
];

// ---- Fixtures ----

const TTL: SignedDuration = SignedDuration::from_secs(30);

fn t(secs: i64) -> Timestamp {
    Timestamp::from_second(1_800_000_000 + secs).unwrap()
}

fn now() -> Timestamp {
    t(0)
}

fn claimant(name: &str) -> Claimant {
    Claimant::new(
        name.into(),
        std::process::id(),
        identity::current().unwrap(),
    )
}

fn claim(store: &dyn Ledger, c: &Claimant, now: Timestamp) -> HeldLease {
    match store.claim_lease(c, now, TTL, None).unwrap() {
        ClaimOutcome::Claimed(lease) => lease,
        ClaimOutcome::Held(row) => panic!("expected a claim, row is held: {row:?}"),
    }
}

fn me() -> identity::StartIdentity {
    identity::current().unwrap()
}

/// A serving server's view of a ledger: the store and the epoch it claimed.
struct Server<'a> {
    store: &'a dyn Ledger,
    epoch: i64,
}

/// Claims the fresh ledger of `s` and serves it.
fn serve(s: &Subject) -> Server<'_> {
    let epoch = claim(&*s.store, &claimant("s"), now()).epoch;
    Server {
        store: &*s.store,
        epoch,
    }
}

pub(super) fn spec(name: &str, concurrency: Concurrency) -> JobSpec {
    JobSpec {
        name: name.into(),
        command: vec!["true".into()],
        concurrency,
        enabled: true,
        ..JobSpec::default()
    }
}

pub(super) fn service(name: &str) -> ServiceSpec {
    ServiceSpec {
        name: name.into(),
        ..ServiceSpec::default()
    }
}

pub(super) fn new_run(
    job: &StoredJob,
    trigger: Trigger,
    scheduled_at: Option<Timestamp>,
) -> NewRun {
    NewRun {
        scheduled_at,
        fired_through: scheduled_at,
        ..NewRun::of(job, trigger, "m", "b", now())
    }
}

pub(super) fn logs() -> &'static Path {
    Path::new("/var/lib/stead-test/logs")
}

pub(super) fn plan(id: i64, log: &Path, _key: &str) -> MonitorPlan {
    MonitorPlan {
        run_id: id,
        ledger: StoreLocator::Sqlite {
            path: PathBuf::new(),
        },
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

fn cut(reason: &str) -> RunEnd {
    RunEnd::with_reason(RunStatus::Interrupted, reason, now())
}

impl Server<'_> {
    fn job(&self, name: &str, concurrency: Concurrency) -> StoredJob {
        self.store
            .job_insert(&spec(name, concurrency), now(), self.epoch)
            .unwrap()
    }

    fn admit(&self, new: &NewRun) -> Result<Admission, StoreError> {
        self.store.run_admit(new, logs(), &plan, self.epoch)
    }

    /// Admits an on-demand run of `job` and returns its id.
    fn queue(&self, job: &StoredJob) -> i64 {
        self.admit(&new_run(job, Trigger::OnDemand, None))
            .unwrap()
            .run
            .id
    }

    /// A run of `job` that was cut while running: interrupted and owed.
    fn interrupted(&self, job: &StoredJob) -> i64 {
        let id = self.queue(job);
        assert!(self.store.mark_running(id, 1, &me(), now()).unwrap());
        assert!(self.store.run_settle(id, &cut("cut"), self.epoch).unwrap());
        id
    }

    fn status(&self, id: i64) -> RunStatus {
        self.store.run_get(id).unwrap().unwrap().status
    }

    fn all_runs(&self) -> Vec<stead_protocol::Run> {
        self.store
            .run_list(&RunFilter {
                limit: Some(MAX_RUN_LIST),
                ..Default::default()
            })
            .unwrap()
    }
}

// ---- The lease ----

fn a_fresh_ledger_has_an_unclaimed_lease(s: &Subject) {
    let store = &*s.store;
    let fresh = LeaseRow {
        epoch: 0,
        owner: None,
        expires_at: from_ms(0),
    };
    assert_eq!(store.lease_row().unwrap(), fresh);
    let never = HeldLease {
        claimant: claimant("a"),
        epoch: 0,
        expires_at: now(),
    };
    assert!(!store.release_lease(&never, now()).unwrap());
    assert_eq!(
        store.renew_lease(&never, now(), TTL).unwrap(),
        RenewOutcome::Superseded(fresh)
    );
}

fn claim_bumps_the_epoch_and_refuses_a_live_lease(s: &Subject) {
    let store = &*s.store;
    let a = claim(store, &claimant("a"), t(0));
    assert_eq!(a.epoch, 1);
    assert_eq!(a.expires_at, t(30));
    match store.claim_lease(&claimant("b"), t(10), TTL, None).unwrap() {
        ClaimOutcome::Held(row) => assert!(row.owned_by(&a)),
        other => panic!("{other:?}"),
    }
    // Expired: a newcomer takes over and the epoch moves on.
    let b = claim(store, &claimant("b"), t(31));
    assert_eq!(b.epoch, 2);
    assert!(store.lease_row().unwrap().owned_by(&b));
}

fn a_dead_owner_is_taken_over_only_while_the_row_is_unchanged(s: &Subject) {
    let store = &*s.store;
    let a = claim(store, &claimant("a"), t(0));
    let judged = store.lease_row().unwrap();
    // The caller proved a dead: the unexpired row is taken over at once.
    let b = match store
        .claim_lease(&claimant("b"), t(1), TTL, Some(&judged))
        .unwrap()
    {
        ClaimOutcome::Claimed(lease) => lease,
        other => panic!("{other:?}"),
    };
    assert_eq!(b.epoch, a.epoch + 1);
    // A second starter that judged the same old row cannot take b's live lease.
    assert!(matches!(
        store
            .claim_lease(&claimant("c"), t(2), TTL, Some(&judged))
            .unwrap(),
        ClaimOutcome::Held(row) if row.owned_by(&b)
    ));
}

fn expired_but_ours_re_arms(s: &Subject) {
    let store = &*s.store;
    let a = claim(store, &claimant("a"), t(0));
    // Slept for an hour: the lease expired long ago, but nobody claimed it.
    match store.renew_lease(&a, t(3600), TTL).unwrap() {
        RenewOutcome::Renewed { expires_at } => assert_eq!(expires_at, t(3630)),
        other => panic!("{other:?}"),
    }
    let row = store.lease_row().unwrap();
    assert!(row.owned_by(&a));
    assert_eq!(row.expires_at, t(3630));
}

fn renewal_after_supersession_fails(s: &Subject) {
    let store = &*s.store;
    let a = claim(store, &claimant("a"), t(0));
    let b = claim(store, &claimant("b"), t(100));
    match store.renew_lease(&a, t(101), TTL).unwrap() {
        RenewOutcome::Superseded(row) => {
            assert!(row.owned_by(&b));
            let why = lease::supersession(&a, &row);
            assert!(why.contains("epoch 2 is now held by server b"), "{why}");
        }
        other => panic!("{other:?}"),
    }
    // A superseded owner cannot release its successor's lease either.
    assert!(!store.release_lease(&a, t(102)).unwrap());
    assert!(store.lease_row().unwrap().owned_by(&b));
}

fn renewal_with_a_wrong_token_fails(s: &Subject) {
    let store = &*s.store;
    let a = claim(store, &claimant("a"), t(0));
    let mut forged = a.clone();
    forged.claimant.token_hash = lease::token_hash(b"guess");
    assert!(matches!(
        store.renew_lease(&forged, t(1), TTL).unwrap(),
        RenewOutcome::Superseded(_)
    ));
    assert!(!store.release_lease(&forged, t(1)).unwrap());
    assert!(matches!(
        store.renew_lease(&a, t(1), TTL).unwrap(),
        RenewOutcome::Renewed { .. }
    ));
}

fn renewal_after_release_fails_and_release_frees_at_once(s: &Subject) {
    let store = &*s.store;
    let a = claim(store, &claimant("a"), t(0));
    assert!(store.release_lease(&a, t(1)).unwrap());
    assert!(!store.release_lease(&a, t(1)).unwrap());
    let row = store.lease_row().unwrap();
    assert_eq!(row.owner, None);
    assert_eq!(row.epoch, 1);
    assert!(matches!(
        store.renew_lease(&a, t(2), TTL).unwrap(),
        RenewOutcome::Superseded(LeaseRow { owner: None, .. })
    ));
    // Released long before expiry, the row is claimable at once.
    assert_eq!(claim(store, &claimant("b"), t(2)).epoch, 2);
}

fn two_handles_see_one_lease(s: &Subject) {
    let other = s.open();
    let a = claim(&*s.store, &claimant("a"), t(0));
    assert!(matches!(
        other.claim_lease(&claimant("b"), t(1), TTL, None).unwrap(),
        ClaimOutcome::Held(_)
    ));
    assert!(other.lease_row().unwrap().owned_by(&a));
}

/// Runs `f` on `n` handles of the ledger at once, each in its own thread, released
/// together, and returns what each returned.
fn race<T: Send>(s: &Subject, n: usize, f: impl Fn(&dyn Ledger) -> T + Sync) -> Vec<T> {
    let handles: Vec<_> = (0..n).map(|_| s.open()).collect();
    let barrier = Barrier::new(n);
    std::thread::scope(|scope| {
        let running: Vec<_> = handles
            .iter()
            .map(|h| {
                let (f, barrier) = (&f, &barrier);
                scope.spawn(move || {
                    barrier.wait();
                    f(&**h)
                })
            })
            .collect();
        running.into_iter().map(|r| r.join().unwrap()).collect()
    })
}

fn racing_claimants_elect_one(s: &Subject) {
    let outcomes = race(s, 6, |h| {
        h.claim_lease(&claimant("racer"), now(), TTL, None).unwrap()
    });
    let won: Vec<_> = outcomes
        .iter()
        .filter_map(|o| match o {
            ClaimOutcome::Claimed(lease) => Some(lease),
            ClaimOutcome::Held(_) => None,
        })
        .collect();
    assert_eq!(won.len(), 1, "{outcomes:?}");
    assert_eq!(won[0].epoch, 1);
    assert!(s.store.lease_row().unwrap().owned_by(won[0]));
}

// ---- Jobs and services ----

fn a_removed_jobs_id_is_never_given_again(s: &Subject) {
    let l = serve(s);
    l.job("a", Concurrency::Forbid);
    let b = l.job("b", Concurrency::Forbid);
    l.queue(&b);
    l.store.job_remove("b", l.epoch).unwrap();
    // Were b's id handed out again, c would inherit b's run in flight (an overlap).
    let c = l.job("c", Concurrency::Forbid);
    assert!(c.id > b.id, "job c got id {}, b had {}", c.id, b.id);
    let first = l.admit(&new_run(&c, Trigger::OnDemand, None)).unwrap();
    assert_eq!(first.run.status, RunStatus::Queued);
}

fn jobs_are_inserted_listed_updated_and_removed(s: &Subject) {
    let l = serve(s);
    for name in ["b", "B", "a_1"] {
        l.job(name, Concurrency::Forbid);
    }
    // Bytewise, whatever the database's locale.
    let names: Vec<_> = l
        .store
        .job_list()
        .unwrap()
        .into_iter()
        .map(|j| j.spec.name)
        .collect();
    assert_eq!(names, ["B", "a_1", "b"]);

    let b = l.store.job_get("b").unwrap().unwrap();
    assert_eq!(b.spec, spec("b", Concurrency::Forbid));
    assert_eq!(
        (b.created_at, b.updated_at, b.anchor),
        (now(), now(), now())
    );
    assert_eq!(b.fired_through, None);
    assert_eq!(l.store.job_get("c").unwrap(), None);
    assert!(matches!(
        l.store.job_insert(&spec("b", Concurrency::Allow), now(), l.epoch),
        Err(StoreError::JobExists(name)) if name == "b"
    ));

    // An edit that keeps the schedule keeps its fire count.
    let mut edited = spec("b", Concurrency::Allow);
    edited.enabled = false;
    let updated = l.store.job_update(&edited, false, t(10), l.epoch).unwrap();
    assert_eq!(updated.id, b.id);
    assert_eq!(updated.spec, edited);
    assert_eq!(
        (updated.updated_at, updated.anchor, updated.fired_through),
        (t(10), now(), None)
    );
    // A new schedule counts its fires from the change.
    let rescheduled = l.store.job_update(&edited, true, t(20), l.epoch).unwrap();
    assert_eq!(
        (rescheduled.anchor, rescheduled.fired_through),
        (t(20), Some(t(20)))
    );
    assert_eq!(l.store.job_get("b").unwrap().unwrap(), rescheduled);
    assert!(matches!(
        l.store.job_update(&spec("c", Concurrency::Allow), false, now(), l.epoch),
        Err(StoreError::NoSuchJob(name)) if name == "c"
    ));

    assert_eq!(l.store.job_remove("b", l.epoch).unwrap(), rescheduled);
    assert_eq!(l.store.job_get("b").unwrap(), None);
    assert!(matches!(
        l.store.job_remove("b", l.epoch),
        Err(StoreError::NoSuchJob(_))
    ));
    assert_eq!(l.store.job_list().unwrap().len(), 2);
}

fn apply_is_all_or_nothing(s: &Subject) {
    let l = serve(s);
    let mut dependent = spec("x", Concurrency::Forbid);
    dependent.depends_on = vec!["db".into()];
    // The second job fails: the service and the first job are not written either.
    let failing = Changes {
        create_services: vec![service("db")],
        create_jobs: vec![dependent.clone(), dependent.clone()],
        ..Changes::default()
    };
    assert!(matches!(
        l.store.apply(&failing, now(), l.epoch),
        Err(StoreError::JobExists(_))
    ));
    assert!(l.store.service_list().unwrap().is_empty());
    assert!(l.store.job_list().unwrap().is_empty());

    let creating = Changes {
        create_services: vec![service("db")],
        create_jobs: vec![dependent.clone()],
        ..Changes::default()
    };
    l.store.apply(&creating, now(), l.epoch).unwrap();
    // A service still named in depends_on cannot go, nor anything else in that apply.
    let orphaning = Changes {
        create_jobs: vec![spec("y", Concurrency::Forbid)],
        remove_services: vec!["db".into()],
        ..Changes::default()
    };
    match l.store.apply(&orphaning, now(), l.epoch) {
        Err(StoreError::ServiceInUse { service, jobs }) => {
            assert_eq!((service.as_str(), jobs), ("db", vec!["x".to_string()]));
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(l.store.job_get("y").unwrap(), None);
    assert_eq!(l.store.service_list().unwrap().len(), 1);
    // Jobs go before services, so both can go in one apply.
    let removing = Changes {
        remove_jobs: vec!["x".into()],
        remove_services: vec!["db".into()],
        ..Changes::default()
    };
    l.store.apply(&removing, now(), l.epoch).unwrap();
    assert!(l.store.job_list().unwrap().is_empty());
    assert!(l.store.service_list().unwrap().is_empty());
}

fn apply_updates_services_and_jobs(s: &Subject) {
    let l = serve(s);
    l.store
        .service_insert(&service("db"), now(), l.epoch)
        .unwrap();
    let job = l.job("x", Concurrency::Forbid);
    let mut db = service("db");
    db.restart = Some("systemctl restart db".into());
    let mut x = spec("x", Concurrency::Allow);
    x.depends_on = vec!["db".into()];
    let changes = Changes {
        update_services: vec![db.clone()],
        update_jobs: vec![(x.clone(), true)],
        ..Changes::default()
    };
    l.store.apply(&changes, t(5), l.epoch).unwrap();
    assert_eq!(l.store.service_list().unwrap()[0].spec, db);
    let stored = l.store.job_get("x").unwrap().unwrap();
    assert_eq!((stored.id, stored.spec, stored.anchor), (job.id, x, t(5)));
    let missing = Changes {
        update_services: vec![service("cache")],
        ..Changes::default()
    };
    assert!(matches!(
        l.store.apply(&missing, now(), l.epoch),
        Err(StoreError::NoSuchService(name)) if name == "cache"
    ));
}

fn services_are_inserted_listed_and_removed(s: &Subject) {
    let l = serve(s);
    for name in ["db", "cache"] {
        let stored = l
            .store
            .service_insert(&service(name), now(), l.epoch)
            .unwrap();
        assert_eq!(
            (stored.spec, stored.restarting_since),
            (service(name), None)
        );
    }
    assert!(matches!(
        l.store.service_insert(&service("db"), now(), l.epoch),
        Err(StoreError::ServiceExists(name)) if name == "db"
    ));
    let names: Vec<_> = l
        .store
        .service_list()
        .unwrap()
        .into_iter()
        .map(|svc| svc.spec.name)
        .collect();
    assert_eq!(names, ["cache", "db"]);

    l.store
        .service_set_restarting("db", Some(t(3)), l.epoch)
        .unwrap();
    assert_eq!(l.store.services_restarting().unwrap(), ["db"]);
    let db = l.store.service_list().unwrap().pop().unwrap();
    assert_eq!(db.restarting_since, Some(t(3)));
    l.store.service_set_restarting("db", None, l.epoch).unwrap();
    assert!(l.store.services_restarting().unwrap().is_empty());

    let mut dependent = spec("x", Concurrency::Forbid);
    dependent.depends_on = vec!["db".into()];
    l.store.job_insert(&dependent, now(), l.epoch).unwrap();
    assert!(matches!(
        l.store.service_remove("db", l.epoch),
        Err(StoreError::ServiceInUse { .. })
    ));
    let removed = l.store.service_remove("cache", l.epoch).unwrap();
    assert_eq!(removed.spec, service("cache"));
    assert_eq!(l.store.service_list().unwrap().len(), 1);
}

fn holds_renew_keeping_their_first_acquisition(s: &Subject) {
    let l = serve(s);
    let hold = |name: &str, acquired: i64, expires: i64| StoredHold {
        name: name.into(),
        service: "db".into(),
        acquired_at: t(acquired),
        expires_at: t(expires),
    };
    assert_eq!(
        l.store
            .hold_upsert(&hold("migrate", 0, 10), l.epoch)
            .unwrap(),
        hold("migrate", 0, 10)
    );
    // Renewed: a new expiry, the first acquisition kept.
    assert_eq!(
        l.store
            .hold_upsert(&hold("migrate", 5, 20), l.epoch)
            .unwrap(),
        hold("migrate", 0, 20)
    );
    l.store.hold_upsert(&hold("backup", 1, 2), l.epoch).unwrap();
    assert_eq!(
        l.store.hold_list().unwrap(),
        [hold("backup", 1, 2), hold("migrate", 0, 20)]
    );
    assert_eq!(
        l.store.hold_remove("migrate", l.epoch).unwrap(),
        hold("migrate", 0, 20)
    );
    assert!(matches!(
        l.store.hold_remove("migrate", l.epoch),
        Err(StoreError::NoSuchHold(name)) if name == "migrate"
    ));
    assert_eq!(l.store.hold_list().unwrap(), [hold("backup", 1, 2)]);
}

// ---- Runs ----

fn a_run_moves_queued_running_succeeded_once(s: &Subject) {
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

fn a_cancel_before_start_wins_over_the_monitor(s: &Subject) {
    let l = serve(s);
    let j = l.job("a", Concurrency::Forbid);
    let id = l.queue(&j);
    let cancel = RunEnd::with_reason(RunStatus::Cancelled, "cancelled before it started", now());
    assert!(l.store.run_settle(id, &cancel, l.epoch).unwrap());
    // The monitor comes up afterwards: it must not start the command.
    assert!(!l.store.mark_running(id, 1, &me(), now()).unwrap());
    assert_eq!(l.status(id), RunStatus::Cancelled);
}

fn a_monitor_that_finishes_first_beats_a_reconciling_server(s: &Subject) {
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

fn a_server_that_settles_first_keeps_its_outcome(s: &Subject) {
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

fn a_cancel_before_start_never_overwrites_a_run_that_just_started(s: &Subject) {
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

fn forbid_skips_replace_hands_back_the_old_and_allow_admits_both(s: &Subject) {
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

fn a_fire_is_recorded_once_and_advances_fired_through(s: &Subject) {
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

fn fired_through_only_moves_forward(s: &Subject) {
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

fn a_passed_over_fire_is_recorded_skipped(s: &Subject) {
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

fn keys_and_original_triggers_are_kept(s: &Subject) {
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

fn active_runs_are_this_machines_and_listing_filters(s: &Subject) {
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

fn listings_filter_page_and_limit(s: &Subject) {
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

fn runs_are_counted_by_job_status_trigger_and_debt(s: &Subject) {
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

fn settle_all_ends_only_runs_in_flight(s: &Subject) {
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

fn an_owed_run_is_resolved_once(s: &Subject) {
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

fn a_landed_run_succeeds_once(s: &Subject) {
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

fn resume_of(job: &StoredJob, parent: i64, note: Option<&str>) -> NewRun {
    NewRun {
        parent_id: Some(parent),
        attempt: 2,
        original_trigger: Some(Trigger::OnDemand),
        resolves: Some((parent, note.map(String::from))),
        ..new_run(job, Trigger::Resume, None)
    }
}

fn a_resume_settles_its_parents_debt_once(s: &Subject) {
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
        Err(StoreError::AlreadyResolved(id)) if id == parent
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

fn a_resume_waits_for_an_overlap_rather_than_skip(s: &Subject) {
    let l = serve(s);
    let j = l.job("a", Concurrency::Forbid);
    let parent = l.interrupted(&j);
    let busy = l.queue(&j);
    let before = l.all_runs().len();
    assert!(matches!(
        l.admit(&resume_of(&j, parent, None)),
        Err(StoreError::Overlap(id)) if id == busy
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

fn a_failure_during_a_restart_is_a_cut(s: &Subject) {
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

fn unknown_names_and_ids_are_reported(s: &Subject) {
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
        Err(StoreError::NoSuchService(name)) if name == "db"
    ));
    assert!(matches!(
        l.store.service_remove("db", l.epoch),
        Err(StoreError::NoSuchService(name)) if name == "db"
    ));
    assert!(matches!(
        l.store.hold_remove("h", l.epoch),
        Err(StoreError::NoSuchHold(name)) if name == "h"
    ));
}

// ---- Fencing ----

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

fn every_server_write_is_fenced(s: &Subject) {
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
                    .run_admit(&new_run(&j, Trigger::OnDemand, None), logs(), &plan, stale)
                    .map(drop),
            ),
            (
                "run_admit (a resume)",
                l.store
                    .run_admit(&resume_of(&j, owed, None), logs(), &plan, stale)
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
                matches!(result, Err(StoreError::Fenced { epoch }) if epoch == stale),
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

fn a_newer_claim_fences_the_older_server(s: &Subject) {
    let first = claim(&*s.store, &claimant("a"), t(0));
    let job = s
        .store
        .job_insert(&spec("a", Concurrency::Allow), now(), first.epoch)
        .unwrap();
    // Another process takes over the expired lease through its own connection.
    let other = s.open();
    let second = claim(&*other, &claimant("b"), t(31));
    assert_eq!(second.epoch, first.epoch + 1);
    assert!(matches!(
        s.store.run_admit(
            &new_run(&job, Trigger::OnDemand, None),
            logs(),
            &plan,
            first.epoch
        ),
        Err(StoreError::Fenced { .. })
    ));
    assert!(matches!(
        s.store.job_remove("a", first.epoch),
        Err(StoreError::Fenced { .. })
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
            logs(),
            &plan,
            second.epoch,
        )
        .unwrap();
    assert_eq!(
        other.run_get(admitted.run.id).unwrap().unwrap().status,
        RunStatus::Queued
    );
    other.job_remove("a", second.epoch).unwrap();
}

fn monitors_write_whoever_serves(s: &Subject) {
    let l = serve(s);
    let j = l.job("a", Concurrency::Allow);
    let id = l.queue(&j);
    // The server is superseded (its successor took the expired lease): the run's monitor
    // still records its run.
    claim(l.store, &claimant("b"), t(31));
    assert!(l.store.mark_running(id, 1, &me(), now()).unwrap());
    assert!(l.store.finish(id, &RunEnd::exited(0, now())).unwrap());
    assert_eq!(l.status(id), RunStatus::Succeeded);
}

fn racing_admissions_queue_one_run_of_a_forbid_job(s: &Subject) {
    let l = serve(s);
    let j = l.job("a", Concurrency::Forbid);
    let statuses = race(s, 6, |h| {
        h.run_admit(
            &new_run(&j, Trigger::OnDemand, None),
            logs(),
            &plan,
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

fn racing_resumes_settle_a_debt_once(s: &Subject) {
    let l = serve(s);
    let j = l.job("a", Concurrency::Allow);
    let parent = l.interrupted(&j);
    let results = race(s, 6, |h| {
        h.run_admit(&resume_of(&j, parent, None), logs(), &plan, l.epoch)
            .map(|adm| adm.run.id)
    });
    let won: Vec<i64> = results
        .iter()
        .filter_map(|r| r.as_ref().ok().copied())
        .collect();
    assert_eq!(won.len(), 1, "{results:?}");
    assert!(
        results
            .iter()
            .all(|r| matches!(r, Ok(_) | Err(StoreError::AlreadyResolved(_)))),
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

fn racing_fires_record_one_run(s: &Subject) {
    let l = serve(s);
    let j = l.job("cron", Concurrency::Allow);
    let at = now() + SignedDuration::from_secs(60);
    let results = race(s, 6, |h| {
        h.run_admit(
            &new_run(&j, Trigger::Scheduled, Some(at)),
            logs(),
            &plan,
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
