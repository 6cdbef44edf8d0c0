//! The scheduler in process, with a wall clock the test moves: jumps across fire times
//! (a laptop waking, an NTP correction) fire what was due.

use std::time::Duration;

use jiff::Timestamp;
use stead_protocol::{JobSpec, Run, RunFilter, Trigger, method};
use stead_server::testing::{TEST_MACHINE, TestServer};
use stead_store::Store;

use crate::harness::*;

fn t(s: &str) -> Timestamp {
    s.parse().unwrap()
}

/// Polls the ledger until a run for `scheduled_at` exists.
async fn run_for(store: &dyn Store, scheduled_at: &str) -> Run {
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
    let server = TestServer::start(
        dir.path(),
        env!("CARGO_BIN_EXE_steadd").as_ref(),
        t("2026-11-30T10:00:00Z"),
    )
    .await;
    server
        .call::<method::JobAdd>(JobSpec {
            name: "half-past".into(),
            cron: Some("30 * * * *".into()),
            tz: Some("UTC".into()),
            command: vec!["true".into()],
            ..JobSpec::default()
        })
        .await
        .unwrap();

    // The clock jumps from 10:00 over the 10:30 fire: it was missed, so it is caught up.
    server.clock.set(t("2026-11-30T10:45:00Z"));
    let missed = run_for(&*server.store, "2026-11-30T10:30:00Z").await;
    assert_eq!(missed.trigger, Trigger::CatchUp);
    assert_eq!(missed.job, "half-past");
    assert_eq!(missed.machine_id, TEST_MACHINE);
    assert_eq!(missed.idempotency_key, "half-past@2026-11-30T10:30:00.000Z");

    // The clock reaches 11:30 while the scheduler waits for it: an on-time fire.
    server.clock.set(t("2026-11-30T11:30:00.200Z"));
    let punctual = run_for(&*server.store, "2026-11-30T11:30:00Z").await;
    assert_eq!(punctual.trigger, Trigger::Scheduled);

    // Exactly one run per fire.
    let all = server.store.run_list(&RunFilter::default()).unwrap();
    assert_eq!(all.len(), 2, "{all:?}");
    server.stop().await;
}
