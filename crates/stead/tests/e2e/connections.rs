//! Many runs in flight on a host of a shared ledger need no more connections to the
//! database than its server holds: each run's monitor records through its own host's
//! server, over the socket it already has. Shown on a private PostgreSQL whose
//! `max_connections` is 30, with 60 runs going at once. The host's URL carries a
//! password (the private server trusts loopback, so it is not checked), which no table
//! and no log may keep.

use std::collections::BTreeMap;

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
    let mut client = postgres::Client::connect(&pg.url(), postgres::NoTls).unwrap();
    let tables: Vec<String> = client
        .query(
            "SELECT tablename FROM pg_tables WHERE schemaname = 'public'",
            &[],
        )
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    assert!(tables.iter().any(|t| t == "runs"), "{tables:?}");
    let mut rows = 0;
    for table in &tables {
        for row in client
            .query(&format!("SELECT t::text FROM {table} t"), &[])
            .unwrap()
        {
            let text: String = row.get(0);
            assert!(!text.contains(secret), "{table} keeps the password: {text}");
            rows += 1;
        }
    }
    assert!(rows >= 60, "the runs were read: {rows} rows");
    for entry in walk(host.path()) {
        let bytes = std::fs::read(&entry).unwrap_or_default();
        assert!(
            !String::from_utf8_lossy(&bytes).contains(secret),
            "{} keeps the password",
            entry.display()
        );
    }
}

/// Every file under `dir` but the configuration (which holds the URL by design, and
/// has none here: it came from the environment).
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
