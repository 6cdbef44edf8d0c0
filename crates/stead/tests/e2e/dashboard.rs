//! The dashboard in a real browser: headless Chromium, driven by playwright-core
//! (`web-tests/dashboard.mjs`), against the real server. It loads the page, sees a run
//! started elsewhere appear and finish live, clicks "Run now" and sees the new run,
//! reads a log, cancels a run and toggles a job; it follows a retry chain and an after-run
//! to the runs they came from, sees a run wait for a place in a queue with its parameters,
//! the queues and notifiers, and a paused job, which it unpauses and pauses. The
//! screenshot it takes is kept as a test artifact in `target/artifacts/dashboard.png`.
//!
//! Needs Debian's chromium, Node.js and `web-tests/node_modules`: `scripts/setup-browser`
//! installs them (the test command runs it first).

use std::path::PathBuf;
use std::process::Command;

use crate::api::Api;
use crate::harness::*;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

#[test]
fn the_dashboard_shows_runs_live_and_its_buttons_act() {
    let web_tests = repo().join("web-tests");
    let chromium = std::env::var("STEAD_CHROMIUM").unwrap_or_else(|_| "/usr/bin/chromium".into());
    for (needed, what) in [
        (PathBuf::from(&chromium), "chromium"),
        (
            web_tests.join("node_modules/playwright-core"),
            "playwright-core",
        ),
    ] {
        assert!(
            needed.exists(),
            "{what} is missing ({}): run scripts/setup-browser",
            needed.display()
        );
    }

    let dir = StateDir::new();
    add_job(&dir, "fast", &["--every", "1h"], "sleep 0.3; echo done");
    add_job(&dir, "slow", &["--every", "1h"], "sleep 299.123");
    add_job(
        &dir,
        "nightly",
        &["--cron", "0 3 * * *", "--tz", "Europe/Berlin"],
        "true",
    );
    json(&dir, &["service", "add", "web", "--restart", "true"]);
    add_job(
        &dir,
        "flaky",
        &["--retries", "1", "--retry-delay", "1s"],
        "exit 3",
    );
    add_job(&dir, "after-fast", &["--after", "fast"], "echo after");
    json(&dir, &["queue", "set", "gpu", "--parallel", "1"]);
    add_job(&dir, "gpu-hold", &["--queue", "gpu"], "sleep 299.456");
    add_job(
        &dir,
        "gpu-next",
        &["--queue", "gpu"],
        r#"echo "$GREETING" "$@""#,
    );
    add_job(&dir, "ticker", &["--every", "2s"], "true");
    json(&dir, &["job", "pause", "ticker", "--for", "1h"]);
    // Port 9 (discard) refuses: its deliveries stay pending, with the error.
    json(
        &dir,
        &[
            "notify",
            "add",
            "hook",
            "--url",
            "http://127.0.0.1:9/hook",
            "--event",
            "failed",
        ],
    );
    let stead = env!("CARGO_BIN_EXE_stead");
    add_job(
        &dir,
        "stepped",
        &[],
        &format!(
            "{stead} step fetch -- true && {stead} checkpoint set draft d1 && {stead} step upload -- true"
        ),
    );
    // Port 9 refuses: the run waits out its network_wait, then goes on and says so.
    add_job(
        &dir,
        "offline",
        &[
            "--needs-network",
            "--network-check",
            "127.0.0.1:9",
            "--network-wait",
            "1s",
        ],
        "true",
    );
    json(&dir, &["run", "fast", "--wait"]);
    json(&dir, &["run", "stepped", "--wait"]);
    json(&dir, &["run", "offline", "--wait"]);
    let api = Api::start(&dir);

    let artifacts = repo().join("target/artifacts");
    let screenshot = artifacts.join("dashboard.png");
    let _ = std::fs::remove_file(&screenshot);
    let out = Command::new("node")
        .arg(web_tests.join("dashboard.mjs"))
        .current_dir(&web_tests)
        .env("STEAD_URL", &api.base)
        .env("STEAD_TOKEN", &api.token)
        .env("STEAD_SCREENSHOT", &screenshot)
        .env("STEAD_JOB_FAST", "fast")
        .env("STEAD_JOB_SLOW", "slow")
        .env("STEAD_JOB_FLAKY", "flaky")
        .env("STEAD_JOB_AFTER", "after-fast")
        .env("STEAD_QUEUE", "gpu")
        .env("STEAD_JOB_HOLD", "gpu-hold")
        .env("STEAD_JOB_QUEUED", "gpu-next")
        .env("STEAD_JOB_PAUSE", "nightly")
        .env("STEAD_JOB_PAUSED", "ticker")
        .env("STEAD_NOTIFIER", "hook")
        .env("STEAD_JOB_STEPS", "stepped")
        .env("STEAD_JOB_WAITED", "offline")
        .env("STEAD_CHROMIUM", &chromium)
        .output()
        .expect("node runs (scripts/setup-browser checks it is installed)");
    let stdout = text(&out.stdout);
    assert!(
        out.status.success(),
        "the browser test failed ({}):\n{stdout}\n{}\nserver log:\n{}",
        out.status,
        text(&out.stderr),
        dir.log()
    );
    eprintln!("{stdout}");
    assert!(
        stdout.lines().filter(|l| l.starts_with("ok - ")).count() >= 30,
        "{stdout}"
    );
    let latency: i64 = stdout
        .lines()
        .find_map(|l| l.strip_prefix("dashboard_latency_ms="))
        .expect("the run-end latency is reported")
        .parse()
        .unwrap();
    // Not a performance target (that is the benchmark's): a stream that stalled would
    // still let the page catch up on a refetch, and this tells the two apart.
    assert!(latency < 5_000, "the page showed the end {latency} ms late");
    assert!(screenshot.exists(), "the screenshot artifact was written");

    // What the page did is on the ledger, as the CLI sees it.
    let runs = json(&dir, &["runs", "--job", "slow"]);
    assert_eq!(runs[0]["status"], "cancelled");
    let nightly = json(&dir, &["job", "show", "nightly"]);
    assert!(nightly["paused_until"].is_string(), "{nightly}");
    wait_until("the cancelled commands are gone", || {
        processes_with("299.123") + processes_with("299.456") == 0
    });
}
