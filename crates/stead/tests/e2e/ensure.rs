//! `ensure_available` with real spawned servers and failing stand-ins.

use std::io;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use stead_client::config::Timings;
use stead_client::paths::StatePaths;
use stead_client::{ClientError, ServerSpawner, Spawner, ensure_available};

use crate::harness::*;

/// Plays a script of spawns: `None` spawns a stand-in that fails with a diagnostic,
/// `Some(())` the real server.
struct Scripted {
    real: ServerSpawner,
    plan: Vec<bool>,
    spawned: usize,
}

impl Scripted {
    fn new(dir: &StateDir, plan: &[bool]) -> Self {
        Self {
            real: ServerSpawner::new(env!("CARGO_BIN_EXE_steadd"), dir.path())
                .env("STEAD_LEASE_MS", LEASE_MS.to_string())
                .env("STEAD_HEARTBEAT_MS", HEARTBEAT_MS.to_string()),
            plan: plan.to_vec(),
            spawned: 0,
        }
    }
}

impl Spawner for Scripted {
    fn spawn(&mut self) -> io::Result<Child> {
        let n = self.spawned;
        self.spawned += 1;
        if self.plan.get(n).copied().unwrap_or(false) {
            self.real.spawn()
        } else {
            Command::new("sh")
                .arg("-c")
                .arg(format!(
                    "echo 'stead: spawn {} failed: disk on fire' >&2; exit 3",
                    n + 1
                ))
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
        }
    }
}

fn timings() -> Timings {
    Timings {
        probe_timeout: Duration::from_millis(PROBE_TIMEOUT_MS),
        start_timeout: Duration::from_millis(START_TIMEOUT_MS),
        ..Timings::default()
    }
}

fn socket(dir: &StateDir) -> std::path::PathBuf {
    StatePaths::create(dir.path())
        .unwrap()
        .socket()
        .to_path_buf()
}

#[test]
fn a_failing_first_spawn_is_followed_by_a_healthy_second() {
    let dir = StateDir::new();
    let mut spawner = Scripted::new(&dir, &[false, true]);
    let started = Instant::now();
    let conn = ensure_available(&socket(&dir), &timings(), &mut spawner).unwrap();
    assert_eq!(spawner.spawned, 2);
    assert!(started.elapsed() < Duration::from_millis(START_TIMEOUT_MS));
    assert_eq!(conn.hello().unwrap().epoch, 1);
}

#[test]
fn when_every_spawn_fails_the_error_carries_the_last_diagnostic() {
    let dir = StateDir::new();
    let mut spawner = Scripted::new(&dir, &[false, false, false, false]);
    let err = ensure_available(&socket(&dir), &timings(), &mut spawner).unwrap_err();
    assert_eq!(spawner.spawned, 3, "at most three spawns");
    assert!(matches!(err, ClientError::Unavailable(_)), "{err}");
    assert_eq!(
        err.to_string(),
        "stead server did not become ready: spawn 3 failed: disk on fire"
    );
}

#[test]
fn a_serving_holder_is_reached_without_any_spawn() {
    let dir = StateDir::new();
    let status = dir.status();
    let mut spawner = Scripted::new(&dir, &[]);
    let conn = ensure_available(&socket(&dir), &timings(), &mut spawner).unwrap();
    assert_eq!(spawner.spawned, 0);
    assert_eq!(
        conn.hello().unwrap().server_id,
        status["server_id"].as_str().unwrap()
    );
}
