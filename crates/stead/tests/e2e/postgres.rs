//! One host on the PostgreSQL ledger, end to end: the same server, CLI and monitors as on
//! SQLite, with the ledger in a database of the test's own.

use stead_store::postgres::scratch::ScratchDb;

use crate::harness::*;

/// A state directory whose servers keep their ledger in `db`.
fn on(db: &ScratchDb) -> StateDir {
    let mut dir = StateDir::new();
    dir.set_env("STEAD_STORE_URL", &db.url);
    dir
}

#[test]
fn jobs_run_and_outlive_a_crashed_server_on_postgres() {
    let db = ScratchDb::create();
    let dir = on(&db);
    let status = dir.status();
    assert!(
        status["ledger"].as_str().unwrap().ends_with(&db.name),
        "{status}"
    );
    let gate = dir.path().join("go");
    add_job(&dir, "quick", &["--every", "1h"], "echo from-postgres");
    add_job(
        &dir,
        "held",
        &["--every", "1h"],
        &format!(
            "while [ ! -e {} ]; do sleep 0.02; done; echo released",
            gate.display()
        ),
    );
    let quick = json(&dir, &["run", "quick", "--wait"]);
    assert_eq!(quick["status"], "succeeded");
    assert_eq!(
        text(&dir.run(&["logs", &quick["id"].to_string()]).stdout),
        "from-postgres\n"
    );

    // A crash of the server leaves the run to its monitor; the next server adopts it.
    let held = json(&dir, &["run", "held"])["id"].as_i64().unwrap();
    wait_status(&dir, held, "running");
    signal(status["pid"].as_u64().unwrap() as u32, libc::SIGKILL);
    let next = dir.status();
    assert_ne!(next["pid"], status["pid"]);
    assert!(next["epoch"].as_i64() > status["epoch"].as_i64());
    std::fs::write(&gate, "").unwrap();
    let run = wait_status(&dir, held, "succeeded");
    assert_eq!(run["exit_code"], 0);
    assert_eq!(
        json(&dir, &["runs", "--job", "held"])
            .as_array()
            .unwrap()
            .len(),
        1
    );
}

/// A fire taken ahead whose mark is answered late (debug builds'
/// `STEAD_TEST_MARK_LATE_MS`) records, on PostgreSQL too, when its command started:
/// its end, written through the server's group commit, corrects the mark.
#[test]
fn a_fires_start_is_its_commands_on_postgres() {
    let db = ScratchDb::create();
    let mut dir = on(&db);
    dir.set_env("STEAD_FIRE_LEAD_MS", "300");
    dir.set_env("STEAD_TEST_MARK_LATE_MS", "800");
    for run in clock_fires(&dir, "2s", 1) {
        let own = started_on_its_own_clock(&run);
        assert!(
            own >= ms_of(run["scheduled_at"].as_str().unwrap()) + 300,
            "{run}"
        );
    }
}

#[test]
fn an_unreachable_postgres_is_named_and_nothing_starts() {
    let mut dir = StateDir::new();
    // A port nothing listens on: the connection is refused at once.
    let port = crate::api::free_port();
    dir.set_env(
        "STEAD_STORE_URL",
        &format!("postgres://stead:secret@127.0.0.1:{port}/ledger"),
    );
    let out = dir.run(&["status"]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(74), "{stderr}");
    assert!(stderr.contains("unreachable"), "{stderr}");
    assert!(
        stderr.contains(&format!("127.0.0.1:{port}/ledger")),
        "{stderr}"
    );
    assert!(!stderr.contains("secret"), "the password leaked: {stderr}");
    assert!(dir.server_pids().is_empty());

    dir.set_env(
        "STEAD_STORE_URL",
        &format!("postgres://127.0.0.1:{port}/ledger?sslmode=allow"),
    );
    let out = dir.run(&["status"]);
    assert_eq!(out.status.code(), Some(78), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("sslmode=allow is not one of"));

    dir.set_env("STEAD_STORE_URL", "mysql://127.0.0.1/ledger");
    let out = dir.run(&["status"]);
    assert_eq!(out.status.code(), Some(78), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("expected a postgres:// URL"));
}

#[test]
fn doctor_on_postgres_reads_and_writes_nothing() {
    let db = ScratchDb::create();
    let dir = on(&db);
    let tables = || stead_store::postgres::scratch::tables(&db.url);
    // A database no server has used yet: the diagnosis creates no schema.
    let out = dir.run(&["doctor", "--json"]);
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(tables().is_empty(), "doctor wrote: {:?}", tables());
    let ledger = report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "ledger")
        .unwrap();
    assert!(
        ledger["summary"]
            .as_str()
            .unwrap()
            .contains("schema version 0"),
        "{ledger}"
    );
    // A ledger in use: the hosts' rows are left as they are, and the clock is checked.
    dir.status();
    dir.run(&["stop"]);
    let hosts_before = host_rows(&db);
    let out = dir.run(&["doctor", "--json"]);
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(host_rows(&db), hosts_before, "doctor touched the hosts");
    let names: Vec<&str> = report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert!(names.contains(&"clock"), "{names:?}");
}

/// Every host row, as text.
fn host_rows(db: &ScratchDb) -> Vec<String> {
    let mut client = postgres::Client::connect(&db.url, postgres::NoTls).unwrap();
    client
        .query("SELECT h::text FROM hosts h ORDER BY machine_id", &[])
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect()
}
