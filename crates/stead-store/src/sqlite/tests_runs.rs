//! Listings use their indexes: SQLite's query plans, which only SQLite has. Everything
//! else about runs, through the trait, is in the store contract (`contract/`).

use stead_protocol::{RunFilter, RunStatus};

use super::SqliteStore;

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
        let mut stmt = conn.prepare(&format!("EXPLAIN QUERY PLAN {sql}")).unwrap();
        let plan: Vec<String> = stmt
            .query_map(rusqlite::params_from_iter(values), |r| r.get(3))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        assert!(plan.iter().any(|p| p.contains(index)), "{plan:?}");
    }
}
