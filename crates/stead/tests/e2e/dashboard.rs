//! The dashboard in a real browser: headless Chromium, driven by playwright-core
//! (`web-tests/dashboard.mjs`), against the real server. It loads the page, sees a run
//! started elsewhere appear and finish live, clicks "Run now" and sees the new run,
//! reads a log, cancels a run and toggles a job. The screenshot it takes is kept as a test
//! artifact in `target/artifacts/dashboard.png`.
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
    json(&dir, &["run", "fast", "--wait"]);
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
        stdout.lines().filter(|l| l.starts_with("ok - ")).count() >= 15,
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
    wait_until("the cancelled command is gone", || {
        processes_with("299.123") == 0
    });
}
