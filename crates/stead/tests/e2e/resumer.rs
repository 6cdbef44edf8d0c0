//! The resumer in process, on a wall clock the test moves: a run cut by a stop is owed,
//! resumed once when the next server comes up soon enough, and given up, not resumed,
//! when the next server comes up after the resume age (a machine that slept for hours).

use std::time::Duration;

use jiff::{SignedDuration, Timestamp};
use stead_client::config::Config;
use stead_protocol::{JobSpec, Run, RunId, RunNow, RunStatus, StopParams, Trigger, method};
use stead_server::testing::TestServer;

use crate::harness::*;

fn t(s: &str) -> Timestamp {
    s.parse().unwrap()
}

fn quick() -> Config {
    let mut config = Config::default();
    config.timings.resume_delay = Duration::from_millis(50);
    config
}

async fn start(dir: &StateDir, now: Timestamp) -> TestServer {
    TestServer::start_with(
        dir.path(),
        env!("CARGO_BIN_EXE_steadd").as_ref(),
        now,
        quick(),
    )
    .await
}

/// Polls run `id` until `done` holds, failing after `PATIENCE`.
async fn until(server: &TestServer, id: i64, what: &str, done: impl Fn(&Run) -> bool) -> Run {
    let deadline = tokio::time::Instant::now() + PATIENCE;
    loop {
        let run = server
            .call::<method::RunGet>(RunId { id })
            .await
            .expect("the run exists");
        if done(&run) {
            return run;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "run {id} never {what}: {run:?}"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// A server at `at` with one long run of job `work`, stopped with its runs cut: run 1 is
/// interrupted and owed.
async fn cut_at(dir: &StateDir, at: Timestamp) {
    let server = start(dir, at).await;
    server
        .call::<method::JobAdd>(JobSpec {
            name: "work".into(),
            command: vec!["sleep 300".into()],
            shell: true,
            ..JobSpec::default()
        })
        .await
        .unwrap();
    let run = server
        .call::<method::RunNow>(RunNow {
            job: "work".into(),
            ..RunNow::default()
        })
        .await
        .unwrap();
    until(&server, run.id, "started", |r| {
        r.status == RunStatus::Running
    })
    .await;
    server
        .call::<method::Stop>(StopParams { cancel_runs: true })
        .await
        .unwrap();
    server.stop().await;
}

#[tokio::test]
async fn a_cut_run_is_resumed_once_by_the_next_server_within_the_resume_age() {
    let dir = StateDir::new();
    cut_at(&dir, t("2026-11-30T10:00:00Z")).await;

    // An hour later by the wall clock: well inside the six hours a debt is kept.
    let server = start(&dir, t("2026-11-30T11:00:00Z")).await;
    let cut = until(&server, 1, "was settled", |r| r.resolution.is_some()).await;
    assert_eq!(cut.status, RunStatus::Interrupted);
    assert_eq!(cut.resolution.as_deref(), Some("resumed as run 2"));
    let resume = until(&server, 2, "started", |r| r.status == RunStatus::Running).await;
    assert_eq!(resume.trigger, Trigger::Resume);
    assert_eq!(resume.original_trigger, Some(Trigger::OnDemand));
    assert_eq!(resume.parent_id, Some(1));
    assert_eq!(resume.idempotency_key, cut.idempotency_key);
    server
        .call::<method::RunCancel>(RunId { id: 2 })
        .await
        .unwrap();
    server.stop().await;
}

#[tokio::test]
async fn a_cut_run_older_than_the_resume_age_is_settled_not_resumed() {
    let dir = StateDir::new();
    let cut_at_time = t("2026-11-30T10:00:00Z");
    cut_at(&dir, cut_at_time).await;

    // Seven hours later: the machine slept through the whole resume age.
    let server = start(&dir, cut_at_time + SignedDuration::from_hours(7)).await;
    let cut = until(&server, 1, "was settled", |r| r.resolution.is_some()).await;
    let resolution = cut.resolution.unwrap();
    assert!(
        resolution.starts_with("not resumed: ") && resolution.contains("6h"),
        "{resolution}"
    );
    let runs = server
        .call::<method::RunList>(Default::default())
        .await
        .unwrap();
    assert_eq!(runs.len(), 1, "nothing was resumed: {runs:?}");
    server.stop().await;
}
