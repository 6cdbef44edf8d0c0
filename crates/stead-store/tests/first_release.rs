//! Every later schema opens the ledger of the first release with nothing lost.
//!
//! `fixtures/ledger-0.1.0.db` was made by stead 0.1.0 (schema 5): six jobs (one with every
//! field of a spec), a service, a hold, and runs of every ending: succeeded, failed,
//! cancelled, skipped, interrupted and resumed, interrupted and given up, and one
//! interrupted run still owed. Each migration added later runs on it here; the server's
//! view of the same file is tested end to end in `stead`'s `e2e compat`.

use std::path::Path;

use jiff::Timestamp;
use stead_core::records::{Fence, NewRun};
use stead_protocol::{Concurrency, RunFilter, RunStatus, Trigger};
use stead_store::sqlite::{SqliteStore, check_integrity, schema_version_count};
use stead_store::{Catalog, Lease, RunCheckpoints, RunLedger};

const MACHINE: &str = "fixture-machine";

fn opened() -> (tempfile::TempDir, SqliteStore) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("stead.db");
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/ledger-0.1.0.db"),
        &path,
    )
    .unwrap();
    let store = SqliteStore::open(&path).expect("the first release's ledger opens");
    (dir, store)
}

#[test]
fn it_migrates_to_this_schema_and_stays_sound() {
    let (dir, _store) = opened();
    let report = check_integrity(&dir.path().join("stead.db")).unwrap();
    assert_eq!(report.schema_version, schema_version_count());
    assert_eq!(report.problems, Vec::<String>::new());
    assert_eq!(report.journal_mode, "wal");
}

#[test]
fn its_jobs_services_and_holds_read_back_whole() {
    let (_dir, store) = opened();
    let names: Vec<String> = store
        .job_list()
        .unwrap()
        .into_iter()
        .map(|j| j.spec.name)
        .collect();
    assert_eq!(
        names,
        ["failing", "hello", "nightly", "sleeper", "ticker", "webjob"]
    );
    let nightly = store.job_get("nightly").unwrap().unwrap().spec;
    assert_eq!(nightly.cron.as_deref(), Some("0 3 * * *"));
    assert_eq!(nightly.tz.as_deref(), Some("Europe/Berlin"));
    assert_eq!(nightly.concurrency, Concurrency::Replace);
    assert_eq!(nightly.alternatives, [["echo", "fallback"]]);
    assert_eq!(nightly.landed_check.as_deref(), Some("false"));
    assert_eq!(nightly.depends_on, ["stead"]);
    assert!(!store.job_get("ticker").unwrap().unwrap().spec.enabled);
    let services = store.service_list().unwrap();
    assert_eq!(services.len(), 1);
    assert_eq!(
        services[0].spec.systemd_unit.as_deref(),
        Some("web.service")
    );
    let holds = store.hold_list().unwrap();
    assert_eq!(holds[0].name, "deploy");
    assert_eq!(holds[0].service, "web");
    // Released when its last server stopped.
    assert!(store.lease_row().unwrap().owner.is_none());
}

#[test]
fn its_runs_read_back_with_their_endings_and_debts() {
    let (_dir, store) = opened();
    let runs = store
        .run_list(&RunFilter {
            limit: Some(100),
            ..Default::default()
        })
        .unwrap();
    let seen: Vec<(i64, RunStatus)> = runs.iter().map(|r| (r.id, r.status)).collect();
    use RunStatus::*;
    assert_eq!(
        seen,
        [
            (8, Interrupted),
            (7, Skipped),
            (6, Interrupted),
            (5, Succeeded),
            (4, Interrupted),
            (3, Cancelled),
            (2, Failed),
            (1, Succeeded),
        ]
    );
    let resumed = runs.iter().find(|r| r.id == 6).unwrap();
    assert_eq!(resumed.trigger, Trigger::Resume);
    assert_eq!(resumed.original_trigger, Some(Trigger::OnDemand));
    assert_eq!(resumed.parent_id, Some(4));
    let parent = runs.iter().find(|r| r.id == 4).unwrap();
    assert_eq!(parent.resolution.as_deref(), Some("resumed as run 6"));
    let owed: Vec<i64> = store
        .runs_owed(MACHINE)
        .unwrap()
        .iter()
        .map(|r| r.id)
        .collect();
    assert_eq!(owed, [8], "the one debt the release left");
    assert!(store.runs_active(MACHINE).unwrap().is_empty());
}

#[test]
fn a_new_server_writes_after_it_with_fresh_ids() {
    let (_dir, store) = opened();
    let claimant = stead_core::lease::Claimant::new(
        "after-upgrade".into(),
        std::process::id(),
        stead_sys::identity::current().unwrap(),
    );
    let now = Timestamp::now();
    let lease = match store
        .claim_lease(&claimant, now, jiff::SignedDuration::from_secs(30), None)
        .unwrap()
    {
        stead_core::lease::ClaimOutcome::Claimed(lease) => lease,
        held => panic!("the released lease is claimable: {held:?}"),
    };
    let job = store.job_get("hello").unwrap().unwrap();
    let new = NewRun {
        fence: Fence::Host,
        ..NewRun::of(&job, Trigger::OnDemand, MACHINE, "boot", now)
    };
    let planner = stead_core::plan::Planner {
        ledger: stead_core::locator::LedgerRef::Sqlite {
            path: "stead.db".into(),
        },
        state_dir: "/tmp".into(),
        log_dir: "/tmp/logs".into(),
        power_supplies: None,
    };
    let admitted = store
        .run_admit(&new, &job.spec, &planner, lease.epoch)
        .unwrap();
    assert_eq!(admitted.run.id, 9, "ids are never reused");
    assert_eq!(admitted.run.status, RunStatus::Queued);
}

#[test]
fn its_runs_hold_no_checkpoints_and_take_no_write_without_their_own_token() {
    let (_dir, store) = opened();
    let held = store.checkpoints_of(8).unwrap();
    assert!(held.checkpoints.is_empty() && held.steps.is_empty());
    assert_eq!(
        held.idempotency_key,
        store.run_get(8).unwrap().unwrap().idempotency_key
    );
    // Its plan was made before runs had tokens: no token is its own.
    let refused = store
        .checkpoint_set(8, "", "k", "v", Timestamp::now())
        .unwrap_err();
    assert!(
        matches!(
            refused,
            stead_store::StoreError::Refused(stead_store::Refusal::WrongRunToken(8))
        ),
        "{refused}"
    );
}
