//! Many runs in flight on a host of a shared ledger need no more connections to the
//! database than its server holds: each run's monitor records through its own host's
//! server, over the socket it already has. Shown on a private PostgreSQL whose
//! `max_connections` is 30, with 60 runs going at once. The host's URL carries a
//! password (the private server trusts loopback, so it is not checked), which no table
//! and no log may keep.

use std::collections::BTreeMap;

use stead_store::postgres::scratch::every_row;

use crate::harness::*;
use crate::private_pg::PrivatePostgres;

/// stead's connections to `pg` now (every connection stead opens names itself `stead`).
fn connections(pg: &PrivatePostgres) -> i64 {
    let mut client = postgres::Client::connect(&pg.url(), postgres::NoTls).unwrap();
    client
        .query_one(
            "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'stead'",
            &[],
        )
        .unwrap()
        .get(0)
}

fn statuses(host: &StateDir) -> BTreeMap<String, usize> {
    let runs = json(host, &["runs", "--job", "wide", "--limit", "100"]);
    let mut by = BTreeMap::new();
    for run in runs.as_array().unwrap() {
        *by.entry(run["status"].as_str().unwrap().to_string())
            .or_default() += 1;
    }
    by
}

#[test]
fn sixty_runs_at_once_use_a_handful_of_connections_under_max_connections_30() {
    let pg = PrivatePostgres::start_configured("127.0.0.1", "max_connections = 30", "");
    let secret = "pw-never-stored-6174";
    let url = pg
        .url()
        .replacen("postgres@", &format!("postgres:{secret}@"), 1);
    let mut host = StateDir::new();
    host.set_env("STEAD_STORE_URL", &url);
    host.set_env("STEAD_MACHINE_ID", "machine-wide");
    host.set_env("STEAD_HOST_NAME", "wide");
    host.status();
    let release = host.root().join("release");
    add_job(
        &host,
        "wide",
        &["--every", "1h", "--concurrency", "allow"],
        &format!(
            "while [ ! -e '{}' ]; do sleep 0.05; done",
            release.display()
        ),
    );
    for _ in 0..60 {
        json(&host, &["run", "wide"]);
    }
    let mut peak = 0;
    wait_until("all 60 runs are running at once", || {
        peak = peak.max(connections(&pg));
        statuses(&host).get("running") == Some(&60)
    });
    for _ in 0..20 {
        peak = peak.max(connections(&pg));
    }
    std::fs::write(&release, b"").unwrap();
    wait_until("all 60 runs have succeeded", || {
        peak = peak.max(connections(&pg));
        statuses(&host).get("succeeded") == Some(&60)
    });
    eprintln!("stead's connections with 60 runs in flight: at most {peak}");
    // The server's own connection and its listener, and room for a monitor that had to
    // go around a busy server: nothing like one per run.
    assert!(peak <= 6, "stead held {peak} connections for 60 runs");
    assert!(peak >= 2, "the server's connections were seen: {peak}");

    // Not a row of any table, nor a log, keeps the password.
    let rows = every_row(&pg.url());
    assert!(rows.iter().any(|(t, _)| t == "runs"), "{rows:?}");
    for (table, row) in &rows {
        assert!(!row.contains(secret), "{table} keeps the password: {row}");
    }
    assert!(rows.len() >= 60, "the runs were read: {} rows", rows.len());
    for entry in walk(host.path()) {
        let bytes = std::fs::read(&entry).unwrap_or_default();
        assert!(
            !String::from_utf8_lossy(&bytes).contains(secret),
            "{} keeps the password",
            entry.display()
        );
    }
}

/// Every file under `dir` (here the URL came from the environment, so no file of the
/// state directory may hold it, its configuration included).
fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        match entry.file_type() {
            Ok(t) if t.is_dir() => files.extend(walk(&path)),
            Ok(t) if t.is_file() => files.push(path),
            _ => {}
        }
    }
    files
}
