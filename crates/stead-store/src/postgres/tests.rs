//! What only the PostgreSQL ledger has: migrations shared by racing hosts, a lost or
//! unreachable server, URLs with passwords, one lease per host, and the row lock that
//! fences. Everything through the trait is in the store contract (`contract/`).

use std::sync::Barrier;
use std::sync::mpsc;
use std::time::Duration;

use ::postgres::{Client, NoTls};
use jiff::{SignedDuration, Timestamp};
use stead_protocol::{Concurrency, JobSpec, RunStatus, Trigger};

use stead_core::lease::{ClaimOutcome, Claimant, HeldLease, RenewOutcome};
use stead_core::runs::RunEnd;
use stead_sys::identity;

use super::{CATALOG_LOCK, PgStore, schema_version_count};
use crate::Refusal;
use crate::contract::{ScratchDb, new_run, plain_spec, planner, service, spec};
use crate::{Catalog, Cluster, Lease, RunLedger, RunRecorder, Store, StoreError};

const TTL: SignedDuration = SignedDuration::from_secs(30);

fn t(secs: i64) -> Timestamp {
    Timestamp::from_second(1_800_000_000 + secs).unwrap()
}

/// A lease short enough to watch expire.
const SHORT: SignedDuration = SignedDuration::from_millis(800);

/// Polls `probe` until it has an answer, for up to ten seconds.
fn eventually<T>(what: &str, mut probe: impl FnMut() -> Option<T>) -> T {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        if let Some(found) = probe() {
            return found;
        }
        assert!(std::time::Instant::now() < deadline, "timed out: {what}");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

fn raw(db: &ScratchDb) -> Client {
    Client::connect(&db.url, NoTls).unwrap()
}

fn claim(store: &PgStore, name: &str, now: Timestamp) -> HeldLease {
    let claimant = Claimant::new(
        name.into(),
        std::process::id(),
        identity::current().unwrap(),
    );
    match store.claim_lease(&claimant, now, TTL, None).unwrap() {
        ClaimOutcome::Claimed(lease) => lease,
        ClaimOutcome::Held(row) => panic!("held: {row:?}"),
    }
}

/// Takes a host's lease over from an owner proven dead, whatever the clocks say.
fn take_over(store: &PgStore, name: &str) -> HeldLease {
    let claimant = Claimant::new(
        name.into(),
        std::process::id(),
        identity::current().unwrap(),
    );
    let judged = store.lease_row().unwrap();
    match store
        .claim_lease(&claimant, t(0), TTL, Some(&judged))
        .unwrap()
    {
        ClaimOutcome::Claimed(lease) => lease,
        ClaimOutcome::Held(row) => panic!("held: {row:?}"),
    }
}

fn versions(db: &ScratchDb) -> Vec<i32> {
    raw(db)
        .query(
            "SELECT version FROM schema_migrations ORDER BY version",
            &[],
        )
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect()
}

#[test]
fn starters_racing_to_create_the_ledger_migrate_once() {
    let db = ScratchDb::create();
    let barrier = Barrier::new(8);
    std::thread::scope(|scope| {
        let connecting: Vec<_> = (0..8)
            .map(|i| {
                let (db, barrier) = (&db, &barrier);
                scope.spawn(move || {
                    barrier.wait();
                    PgStore::connect(&db.url, &format!("host{i}")).map(drop)
                })
            })
            .collect();
        for handle in connecting {
            handle.join().unwrap().unwrap();
        }
    });
    let known = i32::try_from(schema_version_count()).unwrap();
    assert_eq!(versions(&db), (1..=known).collect::<Vec<_>>());
    PgStore::connect(&db.url, "m").unwrap();
    assert_eq!(versions(&db).len(), schema_version_count());
}

#[test]
fn a_newer_schema_is_refused_and_left_alone() {
    let db = ScratchDb::create();
    drop(PgStore::connect(&db.url, "m").unwrap());
    raw(&db)
        .execute(
            "INSERT INTO schema_migrations (version, applied_at_ms, applied_by)
             VALUES (999, 0, 'the future')",
            &[],
        )
        .unwrap();
    let err = PgStore::connect(&db.url, "m").unwrap_err();
    assert!(
        matches!(err, StoreError::TooNew { found: 999, .. }),
        "{err}"
    );
    assert!(
        err.to_string().contains("was written by a newer stead"),
        "{err}"
    );
    assert_eq!(versions(&db).len(), schema_version_count() + 1);
}

#[test]
fn one_server_leads_at_a_time_and_a_stale_leader_records_no_fire() {
    let db = ScratchDb::create();
    let (one, two) = (
        PgStore::connect(&db.url, "one").unwrap(),
        PgStore::connect(&db.url, "two").unwrap(),
    );
    let (l1, l2) = (claim(&one, "s1", t(0)), claim(&two, "s2", t(0)));
    let first = one
        .lead(&l1, SHORT)
        .unwrap()
        .expect("the first campaigner leads");
    assert_eq!(
        two.lead(&l2, SHORT).unwrap(),
        None,
        "a live leadership holds"
    );
    // The holder renews even past its expiry, as a host lease does.
    eventually("the leadership lapses", || {
        (!one.leader().unwrap().unwrap().live).then_some(())
    });
    assert_eq!(one.lead(&l1, SHORT).unwrap(), Some(first));
    // Once it lapses, another takes it with a new epoch.
    let second = eventually("another server takes the lapsed leadership", || {
        two.lead(&l2, SHORT).unwrap()
    });
    assert!(second > first);
    assert_eq!(
        one.lead(&l1, SHORT).unwrap(),
        None,
        "the old leader finds it taken"
    );

    // A fire recorded by the old leader, with its old epoch, is refused.
    let job = one
        .job_insert(&spec("tick", Concurrency::Allow), t(0), l1.epoch)
        .unwrap();
    // It carries the fires it coalesced: they are refused with it, in one transaction.
    let coalesced = (1..=3)
        .map(|k| {
            stead_core::records::SkippedFire::one(
                t(60 - 60 * k),
                Trigger::CatchUp,
                stead_core::records::NotRun::Coalesced,
            )
        })
        .collect();
    let fire = stead_core::records::NewRun {
        fence: stead_core::records::Fence::Leader,
        machine_id: String::new(),
        skipped_fires: coalesced,
        ..new_run(&job, Trigger::CatchUp, Some(t(60)))
    };
    assert!(matches!(
        one.run_admit(&fire, &plain_spec(), &planner(), first),
        Err(StoreError::Refused(Refusal::Fenced { .. }))
    ));
    let all = stead_protocol::RunFilter::default();
    assert!(
        two.run_list(&all).unwrap().is_empty(),
        "a fenced pass writes no row"
    );
    let admitted = two
        .run_admit(&fire, &plain_spec(), &planner(), second)
        .unwrap();
    assert_eq!(admitted.run.status, RunStatus::Queued);
    assert_eq!(admitted.skipped.len(), 3);
    let rows = two.run_list(&all).unwrap();
    assert_eq!(rows.len(), 4);
    assert!(rows.iter().filter(|r| r.id != admitted.run.id).all(|r| {
        r.status == RunStatus::Skipped
            && r.reason.as_deref().is_some_and(|why| {
                why.contains(&format!("coalesced into catch-up run {}", admitted.run.id))
            })
    }));
    assert!(
        admitted.plan.is_none(),
        "queued for any host, started by its claimer"
    );
    let leader = two.leader().unwrap().unwrap();
    assert_eq!(
        (leader.epoch, leader.machine_id.as_deref()),
        (second, Some("two"))
    );
}

#[test]
fn hosts_claim_disjoint_runs_and_only_runs_they_may_run() {
    let db = ScratchDb::create();
    let stores: Vec<PgStore> = ["a", "b"]
        .iter()
        .map(|m| PgStore::connect(&db.url, m).unwrap())
        .collect();
    let leases: Vec<HeldLease> = stores.iter().map(|s| claim(s, "s", t(0))).collect();
    let anywhere = stores[0]
        .job_insert(&spec("anywhere", Concurrency::Allow), t(0), leases[0].epoch)
        .unwrap();
    let pinned = stores[0]
        .job_insert(
            &JobSpec {
                hosts: vec!["host-b".into()],
                ..spec("pinned", Concurrency::Allow)
            },
            t(0),
            leases[0].epoch,
        )
        .unwrap();
    let queue = |job| {
        let new = stead_core::records::NewRun {
            machine_id: String::new(),
            ..new_run(job, Trigger::OnDemand, None)
        };
        stores[0]
            .run_admit(&new, &plain_spec(), &planner(), leases[0].epoch)
            .unwrap()
            .run
            .id
    };
    let mut queued: Vec<i64> = (0..20).map(|_| queue(&anywhere)).collect();
    let pinned_id = queue(&pinned);
    queued.sort_unstable();

    // Both hosts claim at once, again and again, until nothing is left.
    let barrier = Barrier::new(2);
    let claimed: Vec<Vec<(i64, String)>> = std::thread::scope(|scope| {
        let handles: Vec<_> = stores
            .iter()
            .zip(&leases)
            .zip(["host-a", "host-b"])
            .map(|((store, lease), name)| {
                let barrier = &barrier;
                scope.spawn(move || {
                    let dir = std::path::PathBuf::from(format!("/var/lib/{name}"));
                    let host = crate::ClaimingHost {
                        machine_id: if name == "host-a" { "a" } else { "b" },
                        name,
                        boot_id: "boot",
                        log_dir: &dir.join("logs"),
                        state_dir: &dir,
                    };
                    barrier.wait();
                    let mut mine = Vec::new();
                    loop {
                        let claimed = store.runs_claim(&host, 3, lease.epoch).unwrap();
                        if claimed.is_empty() {
                            return mine;
                        }
                        assert_eq!(claimed.waiting, 0, "no run of these waits");
                        for plan in claimed.plans {
                            assert!(plan.log_path.starts_with(&dir), "{plan:?}");
                            mine.push((plan.run_id, name.to_string()));
                        }
                    }
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let mut all: Vec<i64> = claimed.iter().flatten().map(|(id, _)| *id).collect();
    all.sort_unstable();
    let mut expected = queued.clone();
    expected.push(pinned_id);
    expected.sort_unstable();
    assert_eq!(all, expected, "every run claimed exactly once");
    let by_a: Vec<i64> = claimed[0].iter().map(|(id, _)| *id).collect();
    assert!(
        !by_a.contains(&pinned_id),
        "host-a claimed a run pinned to host-b"
    );
    let run = stores[1].run_get(pinned_id).unwrap().unwrap();
    assert_eq!(run.machine_id, "b");
}

#[test]
fn only_the_leader_cuts_the_runs_of_a_silent_host() {
    let db = ScratchDb::create();
    let (leader, lost) = (
        PgStore::connect(&db.url, "leader").unwrap(),
        PgStore::connect(&db.url, "lost").unwrap(),
    );
    let (ll, lost_lease) = (claim(&leader, "s1", t(0)), claim(&lost, "s2", t(0)));
    let epoch = leader.lead(&ll, TTL).unwrap().unwrap();
    let job = lost
        .job_insert(&spec("work", Concurrency::Allow), t(0), lost_lease.epoch)
        .unwrap();
    let id = lost
        .run_admit(
            &stead_core::records::NewRun {
                machine_id: "lost".into(),
                ..new_run(&job, Trigger::OnDemand, None)
            },
            &plain_spec(),
            &planner(),
            lost_lease.epoch,
        )
        .unwrap()
        .run
        .id;
    assert!(
        lost.mark_running(id, std::process::id(), &identity::current().unwrap(), t(1))
            .unwrap()
    );
    // Renewed just now: not silent for a lease yet.
    assert!(
        leader
            .settle_lost_hosts(TTL, t(5), epoch)
            .unwrap()
            .is_empty()
    );
    assert!(matches!(
        leader.settle_lost_hosts(SHORT, t(40), epoch + 1),
        Err(StoreError::Refused(Refusal::Fenced { .. }))
    ));
    // Silent for longer than SHORT by the database's clock.
    let settled = eventually("the silent host's run is settled", || {
        let ids = leader.settle_lost_hosts(SHORT, t(40), epoch).unwrap();
        (!ids.is_empty()).then_some(ids)
    });
    assert_eq!(settled, vec![id]);
    let run = leader.run_get(id).unwrap().unwrap();
    assert_eq!(run.status, RunStatus::Interrupted);
    assert!(run.reason.unwrap().contains("its host"), "names the host");
    // The lost host's monitor, still running, cannot record a second outcome.
    let end = RunEnd::with_reason(RunStatus::Succeeded, "done", t(41));
    assert!(!lost.finish(id, &end).unwrap());
}

#[test]
fn each_host_holds_and_fences_by_a_lease_of_its_own() {
    let db = ScratchDb::create();
    let one = PgStore::connect(&db.url, "one").unwrap();
    let two = PgStore::connect(&db.url, "two").unwrap();
    let a = claim(&one, "a", t(0));
    let b = claim(&two, "b", t(0));
    assert_eq!((a.epoch, b.epoch), (1, 1));
    assert!(one.lease_row().unwrap().owned_by(&a));
    assert!(two.lease_row().unwrap().owned_by(&b));
    // Host two's server is replaced; host one's goes on writing with its epoch.
    let b2 = take_over(&two, "b2");
    assert_eq!(b2.epoch, 2);
    one.job_insert(&spec("a", Concurrency::Forbid), t(31), a.epoch)
        .unwrap();
    assert!(matches!(
        two.job_insert(&spec("b", Concurrency::Forbid), t(31), b.epoch),
        Err(StoreError::Refused(Refusal::Fenced { epoch: 1 }))
    ));
    two.job_insert(&spec("b", Concurrency::Forbid), t(31), b2.epoch)
        .unwrap();
    let hosts = raw(&db)
        .query_one("SELECT count(*) FROM hosts", &[])
        .unwrap()
        .get::<_, i64>(0);
    assert_eq!(hosts, 2);
}

#[test]
fn a_claim_waits_for_a_fenced_write_in_flight() {
    let db = ScratchDb::create();
    let store = PgStore::connect(&db.url, "m").unwrap();
    let old = claim(&store, "old", t(0));
    // A write of the old server in flight: its transaction holds the fence.
    let mut writer = raw(&db);
    let mut in_flight = writer.transaction().unwrap();
    let epoch: i64 = in_flight
        .query_one(
            "SELECT epoch FROM hosts WHERE machine_id = 'm' FOR SHARE",
            &[],
        )
        .unwrap()
        .get(0);
    assert_eq!(epoch, old.epoch);
    let (done, claimed) = mpsc::channel();
    std::thread::scope(|scope| {
        scope.spawn(|| {
            let successor = PgStore::connect(&db.url, "m").unwrap();
            done.send(take_over(&successor, "new")).unwrap();
        });
        // The successor cannot move the epoch while the old write may still commit.
        assert!(
            claimed.recv_timeout(Duration::from_millis(500)).is_err(),
            "the claim did not wait for the write in flight"
        );
        in_flight.commit().unwrap();
        let new = claimed.recv_timeout(Duration::from_secs(10)).unwrap();
        assert_eq!(new.epoch, old.epoch + 1);
    });
}

#[test]
fn a_write_waits_for_a_claim_in_flight_and_is_fenced_by_it() {
    let db = ScratchDb::create();
    let store = PgStore::connect(&db.url, "m").unwrap();
    let old = claim(&store, "old", t(0));
    // A successor's claim in flight: the epoch moved, not yet committed.
    let mut claimer = raw(&db);
    let mut claiming = claimer.transaction().unwrap();
    claiming
        .execute(
            "UPDATE hosts SET epoch = epoch + 1 WHERE machine_id = 'm'",
            &[],
        )
        .unwrap();
    let (done, written) = mpsc::channel();
    std::thread::scope(|scope| {
        scope.spawn(|| {
            done.send(store.job_insert(&spec("a", Concurrency::Forbid), t(1), old.epoch))
                .unwrap()
        });
        // Reading the epoch as last committed would let the old server write now.
        assert!(
            written.recv_timeout(Duration::from_millis(500)).is_err(),
            "the write did not wait for the claim in flight"
        );
        claiming.commit().unwrap();
        let result = written.recv_timeout(Duration::from_secs(10)).unwrap();
        assert!(
            matches!(
                result,
                Err(StoreError::Refused(Refusal::Fenced { epoch: 1 }))
            ),
            "{result:?}"
        );
    });
    assert!(store.job_list().unwrap().is_empty());
}

#[test]
fn a_failure_waits_for_a_restart_starting_and_is_a_cut() {
    let db = ScratchDb::create();
    let store = PgStore::connect(&db.url, "m").unwrap();
    let epoch = claim(&store, "s", t(0)).epoch;
    store.service_insert(&service("db"), t(0), epoch).unwrap();
    let dependent = JobSpec {
        depends_on: vec!["db".into()],
        ..spec("a", Concurrency::Allow)
    };
    let stored = store.job_insert(&dependent, t(0), epoch).unwrap();
    let id = store
        .run_admit(
            &new_run(&stored, Trigger::OnDemand, None),
            &plain_spec(),
            &planner(),
            epoch,
        )
        .unwrap()
        .run
        .id;
    assert!(
        store
            .mark_running(id, 1, &identity::current().unwrap(), t(1))
            .unwrap()
    );
    // A restart starting, not yet committed, when the run fails.
    let mut restarter = raw(&db);
    let mut restarting = restarter.transaction().unwrap();
    restarting
        .execute(
            "UPDATE services SET restarting_since_ms = 1 WHERE name = 'db'",
            &[],
        )
        .unwrap();
    let (done, finished) = mpsc::channel();
    std::thread::scope(|scope| {
        scope.spawn(|| {
            done.send(store.finish(id, &RunEnd::exited(1, t(2))))
                .unwrap()
        });
        assert!(
            finished.recv_timeout(Duration::from_millis(500)).is_err(),
            "the monitor's write did not wait for the restart's"
        );
        restarting.commit().unwrap();
        assert!(
            finished
                .recv_timeout(Duration::from_secs(10))
                .unwrap()
                .unwrap()
        );
    });
    assert_eq!(
        store.run_get(id).unwrap().unwrap().status,
        RunStatus::Interrupted
    );
}

#[test]
fn a_service_removal_waits_for_a_job_that_starts_naming_it() {
    let db = ScratchDb::create();
    let store = PgStore::connect(&db.url, "m").unwrap();
    let epoch = claim(&store, "s", t(0)).epoch;
    store.service_insert(&service("db"), t(0), epoch).unwrap();
    // Another host's apply in flight, adding a job that depends on the service.
    let mut other = raw(&db);
    let mut applying = other.transaction().unwrap();
    applying
        .execute("SELECT pg_advisory_xact_lock($1)", &[&CATALOG_LOCK])
        .unwrap();
    let dependent = JobSpec {
        depends_on: vec!["db".into()],
        ..spec("x", Concurrency::Forbid)
    };
    super::jobs::insert(&mut applying, &dependent, t(0)).unwrap();
    let (done, removed) = mpsc::channel();
    std::thread::scope(|scope| {
        scope.spawn(|| done.send(store.service_remove("db", epoch)).unwrap());
        assert!(
            removed.recv_timeout(Duration::from_millis(500)).is_err(),
            "the removal did not wait for the apply in flight"
        );
        applying.commit().unwrap();
        let result = removed.recv_timeout(Duration::from_secs(10)).unwrap();
        assert!(
            matches!(
                result,
                Err(StoreError::Refused(Refusal::ServiceInUse { .. }))
            ),
            "{result:?}"
        );
    });
    assert_eq!(store.service_list().unwrap().len(), 1);
}

#[test]
fn a_lost_connection_is_reopened() {
    let db = ScratchDb::create();
    let store = PgStore::connect(&db.url, "m").unwrap();
    let lease = claim(&store, "s", t(0));
    let kill = |db: &ScratchDb| -> i64 {
        raw(db)
            .query_one(
                "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
                 WHERE datname = current_database() AND application_name = 'stead'",
                &[],
            )
            .unwrap()
            .get(0)
    };
    assert_eq!(kill(&db), 1);
    // Reads and fenced writes go on, on a new connection.
    assert!(store.job_list().unwrap().is_empty());
    assert_eq!(kill(&db), 1);
    store
        .job_insert(&spec("a", Concurrency::Forbid), t(1), lease.epoch)
        .unwrap();
    assert_eq!(store.job_list().unwrap().len(), 1);
}

#[test]
fn a_ledger_that_is_gone_fails_calls_naming_it() {
    let db = ScratchDb::create();
    let store = PgStore::connect(&db.url, "m").unwrap();
    let ledger = store.location().to_string();
    assert!(ledger.ends_with(&format!("/{}", db.name)), "{ledger}");
    db.drop_database();
    let err = store.job_list().unwrap_err();
    assert!(matches!(err, StoreError::Unavailable { .. }), "{err}");
    let message = err.to_string();
    assert!(
        message.starts_with(&format!(
            "the PostgreSQL ledger at {ledger} is unreachable: "
        )),
        "{message}"
    );
    assert!(message.contains("does not exist"), "{message}");
}

#[test]
fn an_unreachable_ledger_is_named_without_its_password() {
    let err = PgStore::connect("postgres://stead:hunter2@127.0.0.1:1/ledger", "m").unwrap_err();
    let message = err.to_string();
    assert!(matches!(err, StoreError::Unavailable { .. }), "{message}");
    assert!(
        message.starts_with("the PostgreSQL ledger at 127.0.0.1:1/ledger is unreachable: "),
        "{message}"
    );
    assert!(!message.contains("hunter2"), "{message}");
}

#[test]
fn unusable_urls_are_refused_without_their_password() {
    let err = PgStore::connect("postgres://stead:hunter2@db:notaport/ledger", "m").unwrap_err();
    let message = err.to_string();
    assert!(matches!(err, StoreError::LedgerUrl { .. }), "{message}");
    assert!(
        message.starts_with("postgres://stead:***@db:notaport/ledger is not a usable"),
        "{message}"
    );
    let err =
        PgStore::connect("postgres://stead:hunter2@db/ledger?sslmode=allow", "m").unwrap_err();
    let message = err.to_string();
    assert!(matches!(err, StoreError::LedgerUrl { .. }), "{message}");
    assert!(message.contains("sslmode=allow is not one of"), "{message}");
    assert!(!message.contains("hunter2"), "{message}");
    let err = PgStore::connect(
        "host=db password=hunter2 sslmode=verify-full sslrootcert=/nonexistent/ca.pem",
        "m",
    )
    .unwrap_err();
    let message = err.to_string();
    assert!(matches!(err, StoreError::LedgerUrl { .. }), "{message}");
    assert!(
        message.contains("cannot read sslrootcert /nonexistent/ca.pem"),
        "{message}"
    );
    assert!(!message.contains("hunter2"), "{message}");
}

#[test]
fn names_order_bytewise_whatever_the_locale() {
    // The contract checks job names; services and holds share the column collation.
    let db = ScratchDb::create();
    let store = PgStore::connect(&db.url, "m").unwrap();
    let lease = claim(&store, "s", t(0));
    for name in ["b", "B", "_a"] {
        store
            .service_insert(&service(name), t(0), lease.epoch)
            .unwrap();
    }
    let names: Vec<String> = store
        .service_list()
        .unwrap()
        .into_iter()
        .map(|s| s.spec.name)
        .collect();
    assert_eq!(names, ["B", "_a", "b"]);
}

#[test]
fn leases_are_judged_by_the_databases_clock_whatever_the_hosts_clocks_say() {
    let db = ScratchDb::create();
    let store = PgStore::connect(&db.url, "m").unwrap();
    let real = Timestamp::now();
    let hour = SignedDuration::from_hours(1);
    let a = claim(&store, "a", real);
    let expires = a.expires_at.duration_since(real);
    assert!(
        expires > TTL - SignedDuration::from_secs(5)
            && expires <= TTL + SignedDuration::from_secs(5),
        "the expiry is the database's now + ttl: {expires:?}"
    );
    // A claimant whose clock runs an hour ahead still finds the lease live.
    let ahead = Claimant::new("b".into(), std::process::id(), identity::current().unwrap());
    assert!(matches!(
        store.claim_lease(&ahead, real + hour, TTL, None).unwrap(),
        ClaimOutcome::Held(row) if row.owned_by(&a)
    ));
    // An owner whose clock runs an hour behind renews until the database's now + ttl,
    // and its offset is on its row for `stead hosts`.
    match store.renew_lease(&a, real - hour, TTL).unwrap() {
        RenewOutcome::Renewed { expires_at } => {
            assert!(
                expires_at >= a.expires_at,
                "{expires_at} < {}",
                a.expires_at
            );
        }
        other => panic!("{other:?}"),
    }
    let row = store
        .hosts()
        .unwrap()
        .into_iter()
        .find(|h| h.machine_id == "m")
        .unwrap();
    let offset = row.clock_offset_ms.expect("the offset is recorded");
    assert!(
        (offset + 3_600_000).abs() < 5_000,
        "an hour behind: {offset}"
    );
    assert!(row.silent_for.unwrap() < SignedDuration::from_secs(5));
    // And the database's clock is what the store reads as the ledger's time.
    let ledger = store.ledger_time().unwrap();
    assert!(ledger.duration_since(Timestamp::now()).abs() < SignedDuration::from_secs(5));
}

#[test]
fn a_part_refused_after_it_wrote_is_undone_alone() {
    let db = ScratchDb::create();
    let store = PgStore::connect(&db.url, "m").unwrap();
    crate::contract::run_writes::a_part_refused_after_it_wrote_is_undone_alone(&store);
}

#[test]
fn a_plan_names_its_ledger_by_identity_and_no_row_keeps_the_password() {
    let db = ScratchDb::create();
    // A URL with a password (the scratch server trusts local connections, so it is not
    // checked, but it is in every string the store is given).
    let secret = "s3cret-pw-4711";
    let url = db
        .url
        .replacen("postgres@", &format!("postgres:{secret}@"), 1);
    assert!(url.contains(secret), "{url}");
    let store = PgStore::connect(&url, "m").unwrap();
    let lease = claim(&store, "s", t(0));
    let job = store
        .job_insert(&spec("work", Concurrency::Allow), t(0), lease.epoch)
        .unwrap();
    let admitted = store
        .run_admit(
            &stead_core::records::NewRun {
                machine_id: "m".into(),
                ..new_run(&job, Trigger::OnDemand, None)
            },
            &job.spec,
            &stead_core::plan::Planner {
                ledger: store.ledger_ref(),
                ..planner()
            },
            lease.epoch,
        )
        .unwrap();
    let plan = admitted.plan.expect("a plan");
    match &plan.ledger {
        stead_core::locator::LedgerRef::Postgres {
            ledger_id,
            database,
        } => {
            assert!(!ledger_id.is_empty());
            assert_eq!(database, db.url.rsplit('/').next().unwrap());
        }
        other => panic!("{other:?}"),
    }
    let rows = super::scratch::every_row(&db.url);
    assert!(rows.iter().any(|(t, _)| t == "runs"), "{rows:?}");
    for (table, row) in rows {
        assert!(!row.contains(secret), "{table} keeps the password: {row}");
    }
}

#[test]
fn a_runs_host_ships_its_log_in_bounded_chunks_that_any_host_reads_by_offset() {
    let db = ScratchDb::create();
    let (a, b) = (
        PgStore::connect(&db.url, "a").unwrap(),
        PgStore::connect(&db.url, "b").unwrap(),
    );
    let (la, lb) = (claim(&a, "sa", t(0)), claim(&b, "sb", t(0)));
    let job = b
        .job_insert(&spec("chatty", Concurrency::Allow), t(0), lb.epoch)
        .unwrap();
    let id = b
        .run_admit(
            &stead_core::records::NewRun {
                machine_id: "b".into(),
                ..new_run(&job, Trigger::OnDemand, None)
            },
            &plain_spec(),
            &planner(),
            lb.epoch,
        )
        .unwrap()
        .run
        .id;
    assert!(
        b.mark_running(id, std::process::id(), &identity::current().unwrap(), t(1))
            .unwrap()
    );
    // 600 KiB of numbered lines, shipped as a heartbeat would: uneven pieces that cross
    // chunk boundaries and fill the last chunk before starting the next.
    let log: Vec<u8> = (0..60_000)
        .flat_map(|i| format!("{i:09}\n").into_bytes())
        .collect();
    assert_eq!(log.len(), 600_000);
    let to_ship = b.logs_to_ship(Some(&[])).unwrap();
    assert_eq!(to_ship.len(), 1);
    assert_eq!(
        (to_ship[0].run_id, to_ship[0].shipped, to_ship[0].ended),
        (id, 0, false)
    );
    assert!(a.logs_to_ship(None).unwrap().is_empty(), "not a's run");
    assert!(matches!(
        a.log_ship(id, 0, b"x", false, la.epoch),
        Err(StoreError::Refused(Refusal::NoSuchRun(_)))
    ));
    assert!(matches!(
        b.log_ship(id, 0, b"x", false, lb.epoch + 1),
        Err(StoreError::Refused(Refusal::Fenced { .. }))
    ));
    let mut at = 0usize;
    for piece in [1usize, 70_000, 200_000] {
        let held = b
            .log_ship(id, at as u64, &log[at..at + piece], false, lb.epoch)
            .unwrap();
        assert_eq!(held, (at + piece) as u64);
        at += piece;
    }
    // The rest, in one chunk's worth at most per write.
    assert!(
        b.log_ship(id, at as u64, &log[at..], false, lb.epoch)
            .is_err()
    );
    while at < log.len() {
        let end = (at + crate::LOG_CHUNK_BYTES).min(log.len());
        at = b
            .log_ship(id, at as u64, &log[at..end], false, lb.epoch)
            .unwrap() as usize;
    }
    assert_eq!(at, log.len());
    // A write at another offset (a stale copy of the same bytes) writes nothing.
    assert_eq!(
        b.log_ship(id, 10, b"garbage", false, lb.epoch).unwrap(),
        log.len() as u64
    );
    let chunks: Vec<(i64, i32)> = raw(&db)
        .query(
            "SELECT byte_offset, octet_length(data) FROM run_log_chunks WHERE run_id = $1
             ORDER BY byte_offset",
            &[&id],
        )
        .unwrap()
        .iter()
        .map(|r| (r.get(0), r.get(1)))
        .collect();
    assert_eq!(
        chunks,
        [(0, 262_144), (262_144, 262_144), (524_288, 75_712)],
        "aligned chunks of at most 256 KiB"
    );

    // Any host reads any stretch, never more than asked or than one chunk.
    for (offset, max) in [
        (0usize, 10usize),
        (262_140, 10),
        (100_000, 400_000),
        (599_990, 100),
        (600_000, 5),
    ] {
        let got = a.log_read(id, offset as u64, max).unwrap();
        let want_end = (offset + max.min(crate::LOG_CHUNK_BYTES)).min(log.len());
        assert_eq!(got.data, &log[offset..want_end], "at {offset}, {max}");
        assert_eq!(got.shipped, log.len() as u64);
        assert!(!got.complete && !got.kept_on_host);
    }

    // The run ends; its log is complete once the tail is shipped, and is then left alone.
    let end = RunEnd::with_reason(RunStatus::Succeeded, "done", t(2));
    assert!(b.finish(id, &end).unwrap());
    assert!(b.logs_to_ship(Some(&[])).unwrap().is_empty(), "not running");
    let tail = b.logs_to_ship(None).unwrap();
    assert_eq!(tail.len(), 1);
    assert!(tail[0].ended && tail[0].shipped == log.len() as u64);
    assert_eq!(b.logs_to_ship(Some(&[id])).unwrap(), tail);
    b.log_ship(id, log.len() as u64, b"", true, lb.epoch)
        .unwrap();
    assert!(a.log_read(id, 0, 1).unwrap().complete);
    assert!(b.logs_to_ship(None).unwrap().is_empty());
    assert_eq!(
        b.log_ship(id, log.len() as u64, b"more", false, lb.epoch)
            .unwrap(),
        log.len() as u64,
        "a complete log takes nothing more"
    );
    // A run nothing was shipped for reads as empty and not complete.
    let nothing = a.log_read(id + 1000, 0, 10).unwrap();
    assert_eq!((nothing.shipped, nothing.complete), (0, false));
}
