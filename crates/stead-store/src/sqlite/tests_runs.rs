//! Listings use their indexes: SQLite's query plans, which only SQLite has. Everything
//! else about runs, through the trait, is in the store contract (`contract/`).

use stead_protocol::{RunFilter, RunStatus};

use super::SqliteStore;
use crate::backend::InFlightOf;

/// The plan SQLite makes for `sql` with `values`: one detail line per step.
fn plan_of(
    conn: &rusqlite::Connection,
    sql: &str,
    values: Vec<rusqlite::types::Value>,
) -> Vec<String> {
    let mut stmt = conn.prepare(&format!("EXPLAIN QUERY PLAN {sql}")).unwrap();
    stmt.query_map(rusqlite::params_from_iter(values), |r| r.get(3))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
}

#[test]
fn filtered_listings_use_their_indexes() {
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteStore::open(&dir.path().join("stead.db")).unwrap();
    let conn = store.conn();
    for (filter, index) in [
        (
            RunFilter {
                job: Some("a".into()),
                ..Default::default()
            },
            "runs_by_job",
        ),
        (
            RunFilter {
                status: Some(RunStatus::Failed),
                limit: Some(5),
                ..Default::default()
            },
            "runs_by_status",
        ),
    ] {
        let (sql, values) = super::runs::list_query(&filter);
        let plan = plan_of(&conn, &sql, values);
        assert!(plan.iter().any(|p| p.contains(index)), "{plan:?}");
    }
}

/// What every admission reads (its job's runs in flight) and what a server coming back
/// reads (its host's) come from the partial indexes of runs not ended, without a sort:
/// read through `runs_by_job_id`, an admission walked every run its job ever had.
#[test]
fn runs_in_flight_are_read_from_their_partial_indexes() {
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteStore::open(&dir.path().join("stead.db")).unwrap();
    let conn = store.conn();
    for (of, index) in [
        (InFlightOf::Job(1), "runs_active_by_job"),
        (InFlightOf::Machine("m"), "runs_active_by_machine"),
    ] {
        let (sql, value) = super::runs::in_flight_query(of);
        let plan = plan_of(&conn, &sql, vec![value]);
        assert!(plan.iter().any(|p| p.contains(index)), "{plan:?}");
        assert!(!plan.iter().any(|p| p.contains("TEMP B-TREE")), "{plan:?}");
    }
}
