//! The scheduler in process, with a wall clock the test moves: jumps across fire times
//! (a laptop waking, an NTP correction) fire what was due.

use std::sync::Arc;
use std::time::Duration;

use jiff::Timestamp;
use serde_json::json;
use stead::client::Connection;
use stead::clock::ManualClock;
use stead::config::Config;
use stead::paths::StatePaths;
use stead::server::{self, StopReason, World};
use stead::store::Store;
use stead::store::locator::StoreLocator;
use stead::store::sqlite::SqliteStore;
use stead_protocol::{Run, RunFilter, Trigger, method};

use crate::harness::*;

fn t(s: &str) -> Timestamp {
    s.parse().unwrap()
}

/// Polls the ledger until a run for `scheduled_at` exists.
async fn run_for(store: &SqliteStore, scheduled_at: &str) -> Run {
    let wanted = t(scheduled_at);
    let deadline = tokio::time::Instant::now() + PATIENCE;
    loop {
        let runs = store.run_list(&RunFilter::default()).unwrap();
        if let Some(run) = runs.into_iter().find(|r| {
            r.scheduled_at
                .as_deref()
                .is_some_and(|s| s.parse::<Timestamp>().unwrap() == wanted)
        }) {
            return run;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "no run for {scheduled_at}"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

#[tokio::test]
async fn a_wall_clock_jump_across_a_fire_time_fires_it() {
    let dir = StateDir::new();
    let paths = StatePaths::create(dir.path()).unwrap();
    let clock = ManualClock::new(t("2026-11-30T10:00:00Z"));
    let store = Arc::new(SqliteStore::open(&paths.ledger()).unwrap());
    let world = World {
        paths: paths.clone(),
        config: Config::default(),
        store: store.clone(),
        ledger: StoreLocator::Sqlite {
            path: paths.ledger(),
        },
        clock: clock.clone(),
        monitor_exe: env!("CARGO_BIN_EXE_stead").into(),
        machine_id: "test-machine".into(),
    };
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    let (ready_tx, ready_rx) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(server::run(
        world,
        async move {
            let _ = stop_rx.await;
            StopReason::Requested
        },
        move |_| {
            let _ = ready_tx.send(());
        },
    ));
    ready_rx.await.unwrap();

    let socket = paths.socket().to_path_buf();
    tokio::task::spawn_blocking(move || {
        let mut conn = Connection::open(&socket, Duration::from_secs(5)).unwrap();
        let _: serde_json::Value = conn
            .call(
                method::JOB_ADD,
                json!({"name": "half-past", "cron": "30 * * * *", "tz": "UTC", "command": ["true"]}),
            )
            .unwrap();
    })
    .await
    .unwrap();

    // The clock jumps from 10:00 over the 10:30 fire: it was missed, so it is caught up.
    clock.set(t("2026-11-30T10:45:00Z"));
    let missed = run_for(&store, "2026-11-30T10:30:00Z").await;
    assert_eq!(missed.trigger, Trigger::CatchUp);
    assert_eq!(missed.job, "half-past");
    assert_eq!(missed.machine_id, "test-machine");
    assert_eq!(missed.idempotency_key, "half-past@2026-11-30T10:30:00.000Z");

    // The clock reaches 11:30 while the scheduler waits for it: an on-time fire.
    clock.set(t("2026-11-30T11:30:00.200Z"));
    let punctual = run_for(&store, "2026-11-30T11:30:00Z").await;
    assert_eq!(punctual.trigger, Trigger::Scheduled);

    // Exactly one run per fire.
    let all = store.run_list(&RunFilter::default()).unwrap();
    assert_eq!(all.len(), 2, "{all:?}");

    stop_tx.send(()).unwrap();
    server.await.unwrap().unwrap();
}
