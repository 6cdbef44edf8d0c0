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
use std::path::{Path, PathBuf};
use std::sync::Barrier;

use jiff::{SignedDuration, Timestamp};
use stead_protocol::{
    Checkpoints, Concurrency, JobSpec, RunFilter, RunStatus, ServiceSpec, Trigger,
};

use stead_core::clock::from_ms;
use stead_core::lease::{self, ClaimOutcome, Claimant, HeldLease, LeaseRow, RenewOutcome};
use stead_core::locator::LedgerRef;
use stead_core::plan::Planner;
use stead_core::records::{
    Admission, Changes, NewRun, NotRun, RunCount, SkippedFire, StoredHold, StoredJob,
};
use stead_core::runs::{CommandStart, RunEnd};
use stead_protocol::limits::MAX_RUN_LIST;
use stead_sys::identity;

#[cfg(feature = "postgres")]
use crate::postgres::PgStore;
#[cfg(feature = "postgres")]
pub(crate) use crate::postgres::scratch::ScratchDb;
use crate::sqlite::SqliteStore;
use crate::{Refusal, RunRecorder, Store, StoreError};

mod catalog;
mod checkpoints;
mod fencing;
mod leases;
mod outcomes;
mod retention;
pub(crate) mod run_writes;
mod runs;
mod sleeps;

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
    (
        $($module:ident :: $name:ident),* $(,)?;
        local clock: $($lmodule:ident :: $lname:ident),* $(,)?
    ) => {
        mod sqlite {
            $(#[test] fn $name() { super::$module::$name(&super::sqlite()) })*
            $(#[test] fn $lname() { super::$lmodule::$lname(&super::sqlite()) })*
        }
        #[cfg(feature = "postgres")]
        mod postgres {
            $(#[test] fn $name() { super::$module::$name(&super::postgres()) })*
        }
    };
}

contract![
    leases::a_fresh_ledger_has_an_unclaimed_lease,
    leases::claim_bumps_the_epoch_and_refuses_a_live_lease,
    leases::a_dead_owner_is_taken_over_only_while_the_row_is_unchanged,
    leases::renewal_after_supersession_fails,
    leases::renewal_with_a_wrong_token_fails,
    leases::renewal_after_release_fails_and_release_frees_at_once,
    leases::two_handles_see_one_lease,
    leases::racing_claimants_elect_one,
    catalog::jobs_are_inserted_listed_updated_and_removed,
    catalog::a_removed_jobs_id_is_never_given_again,
    catalog::apply_is_all_or_nothing,
    catalog::apply_updates_services_and_jobs,
    runs::a_run_moves_queued_running_succeeded_once,
    runs::a_cancel_before_start_wins_over_the_monitor,
    runs::a_monitor_that_finishes_first_beats_a_reconciling_server,
    runs::a_server_that_settles_first_keeps_its_outcome,
    runs::a_cancel_before_start_never_overwrites_a_run_that_just_started,
    runs::forbid_skips_replace_hands_back_the_old_and_allow_admits_both,
    runs::a_fire_is_recorded_once_and_advances_fired_through,
    runs::fired_through_only_moves_forward,
    runs::a_passed_over_fire_is_recorded_skipped,
    runs::every_fire_not_run_gets_a_row_naming_the_catch_up_run,
    runs::a_pass_meeting_a_recorded_fire_writes_nothing,
    runs::a_pass_at_the_row_cap_is_one_transaction,
    runs::a_passed_over_row_carries_the_other_fires_not_run,
    runs::keys_and_original_triggers_are_kept,
    runs::active_runs_are_this_machines_and_listing_filters,
    runs::listings_filter_page_and_limit,
    runs::runs_are_counted_by_job_status_trigger_and_debt,
    runs::settle_all_ends_only_runs_in_flight,
    runs::an_owed_run_is_resolved_once,
    runs::a_landed_run_succeeds_once,
    runs::a_resume_settles_its_parents_debt_once,
    runs::a_resume_waits_for_an_overlap_rather_than_skip,
    runs::a_failure_during_a_restart_is_a_cut,
    runs::unknown_names_and_ids_are_reported,
    runs::a_run_taken_ahead_and_stopped_before_its_instant_ends_where_it_started,
    runs::a_monitors_end_records_when_the_command_started,
    catalog::services_are_inserted_listed_and_removed,
    catalog::holds_renew_keeping_their_first_acquisition,
    fencing::every_server_write_is_fenced,
    fencing::a_newer_claim_fences_the_older_server,
    fencing::monitors_write_whoever_serves,
    fencing::racing_admissions_queue_one_run_of_a_forbid_job,
    fencing::racing_resumes_settle_a_debt_once,
    fencing::racing_fires_record_one_run,
    retention::a_prune_keeps_the_newest_and_never_the_owed_the_latest_or_a_parent,
    retention::a_prune_removes_a_removed_jobs_runs_by_its_id,
    retention::pruning_rows_is_fenced_by_the_leader_epoch,
    retention::a_pruned_log_is_recorded_once_and_never_an_owed_runs,
    outcomes::a_failure_with_retries_left_writes_its_retry_with_it,
    outcomes::a_cut_is_never_retried,
    outcomes::a_success_writes_a_waiting_run_of_each_enabled_downstream_job,
    outcomes::events_are_written_with_their_outcome_for_the_notifiers_that_listen,
    outcomes::queue_loads_count_handed_over_and_waiting_runs,
    outcomes::a_run_closed_by_its_receipt_starts_what_runs_after_it,
    run_writes::writes_of_runs_are_answered_each_as_alone_and_seen_once_committed,
    run_writes::a_refused_write_is_undone_alone,
    sleeps::a_sleep_is_listed_and_counted_into_the_runs_it_fell_into,
    sleeps::an_overdue_lapse_is_told_once_and_ended_by_a_success,
    run_writes::a_batch_of_marks_alone_commits,
    run_writes::an_admission_taken_by_a_waiting_monitor_is_marked_running_in_its_commit,
    checkpoints::a_resume_sees_what_its_cut_attempt_recorded_and_the_cut_one_writes_nothing,
    checkpoints::a_retry_sees_the_failed_attempts_checkpoints,
    checkpoints::bad_names_unknown_runs_and_limits_are_refused_writing_nothing,
    checkpoints::checkpoints_stay_while_a_run_of_their_key_does_and_go_with_the_last;
    // Expiry judged by the `now` the caller passes: a ledger of one host only.
    local clock:
    leases::an_expired_lease_is_taken_by_the_callers_clock,
    leases::expired_but_ours_re_arms,
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

/// Takes the lease over from an owner the caller proved dead, whatever the clocks say.
fn take_over(store: &dyn Ledger, c: &Claimant) -> HeldLease {
    let judged = store.lease_row().unwrap();
    match store.claim_lease(c, now(), TTL, Some(&judged)).unwrap() {
        ClaimOutcome::Claimed(lease) => lease,
        ClaimOutcome::Held(row) => panic!("expected a takeover, row is held: {row:?}"),
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

/// Serves the fresh ledger of `s` and leads its scheduler: the server and its leader
/// epoch (its lease epoch on a ledger of one host, the leadership it claims on a shared
/// one).
fn lead(s: &Subject) -> (Server<'_>, i64) {
    let held = claim(&*s.store, &claimant("s"), now());
    let leader = match s.store.cluster() {
        Some(cluster) => cluster
            .lead(&held, TTL)
            .unwrap()
            .expect("the only host leads"),
        None => held.epoch,
    };
    let server = Server {
        store: &*s.store,
        epoch: held.epoch,
    };
    (server, leader)
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

/// What the tests' runs are planned with: their plans name no ledger of consequence.
pub(super) fn planner() -> Planner {
    Planner {
        ledger: LedgerRef::Sqlite {
            path: PathBuf::new(),
        },
        state_dir: "/var/lib/stead-test".into(),
        log_dir: logs().to_path_buf(),
        power_supplies: None,
    }
}

/// A job's spec for runs whose plan is not what a test is about.
pub(super) fn plain_spec() -> JobSpec {
    spec("job", Concurrency::Allow)
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
        self.store
            .run_admit(new, &plain_spec(), &planner(), self.epoch)
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

fn resume_of(job: &StoredJob, parent: i64, note: Option<&str>) -> NewRun {
    NewRun {
        parent_id: Some(parent),
        attempt: 2,
        original_trigger: Some(Trigger::OnDemand),
        resolves: Some((parent, note.map(String::from))),
        ..new_run(job, Trigger::Resume, None)
    }
}
