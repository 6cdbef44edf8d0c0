//! Throwaway databases for tests and benchmarks: each one created through an admin URL
//! (`STEAD_TEST_PG_URL`, default `postgres://postgres@127.0.0.1:5432/test`) and dropped,
//! connections and all, when its guard drops — even when a test fails.

use std::sync::LazyLock;
use std::sync::atomic::{AtomicUsize, Ordering};

use stead_protocol::redact_url;

/// The admin URL the PostgreSQL tests create their databases through.
static ADMIN_URL: LazyLock<String> = LazyLock::new(|| {
    std::env::var("STEAD_TEST_PG_URL")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/test".into())
});

/// A database of one test's own, dropped (connections and all) when the test ends.
pub struct ScratchDb {
    pub name: String,
    /// The URL of the scratch database.
    pub url: String,
}

impl ScratchDb {
    pub fn create() -> Self {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let name = format!(
            "stead_t_{}_{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        );
        // An ICU English collation, not the server's (often C): ordering that would
        // differ from SQLite's bytewise one shows in the tests.
        admin()
            .batch_execute(&format!(
                "CREATE DATABASE {name} TEMPLATE template0
                 LOCALE_PROVIDER icu ICU_LOCALE 'en-US'"
            ))
            .unwrap_or_else(|e| {
                panic!(
                    "cannot create database {name} (PostgreSQL 15 or later, built with ICU, \
                     is needed): {}",
                    super::describe(&e)
                )
            });
        let url = with_dbname(&ADMIN_URL, &name);
        Self { name, url }
    }
}

impl ScratchDb {
    /// Drops the database now, cutting its connections (as a vanished server would).
    pub fn drop_database(&self) {
        let dropped = admin().batch_execute(&format!(
            "DROP DATABASE IF EXISTS {} WITH (FORCE)",
            self.name
        ));
        if let Err(e) = dropped {
            eprintln!("could not drop test database {}: {e}", self.name);
        }
    }
}

impl Drop for ScratchDb {
    fn drop(&mut self) {
        self.drop_database();
    }
}

fn admin() -> ::postgres::Client {
    super::connect_url(&ADMIN_URL).unwrap_or_else(|e| {
        panic!(
            "PostgreSQL is not reachable at {} ({e}). The PostgreSQL ledger tests need a \
             server where they may create databases: start one with \
             `pg_ctlcluster 15 main start` (or scripts/ensure-postgres), or set \
             STEAD_TEST_PG_URL to such a server's URL",
            redact_url(&ADMIN_URL),
        )
    })
}

/// `url` naming database `db` instead (URL or key/value form).
fn with_dbname(url: &str, db: &str) -> String {
    match url.split_once("://") {
        Some((scheme, rest)) => {
            let (rest, query) = match rest.split_once('?') {
                Some((rest, query)) => (rest, format!("?{query}")),
                None => (rest, String::new()),
            };
            let authority = rest.split_once('/').map_or(rest, |(a, _)| a);
            format!("{scheme}://{authority}/{db}{query}")
        }
        None => format!("{url} dbname={db}"),
    }
}

/// The tables of the database at `url`, by name.
pub fn tables(url: &str) -> Vec<String> {
    super::connect_url(url)
        .expect("the database answers")
        .query(
            "SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY 1",
            &[],
        )
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect()
}

/// Every row of every table of the database at `url`, as `(table, row as text)`: what
/// a test searches for something no row may keep (a password).
pub fn every_row(url: &str) -> Vec<(String, String)> {
    let mut client = super::connect_url(url).expect("the database answers");
    let mut rows = Vec::new();
    for table in tables(url) {
        for row in client
            .query(&format!("SELECT t::text FROM {table} t"), &[])
            .unwrap()
        {
            rows.push((table.clone(), row.get(0)));
        }
    }
    rows
}
