//! A full disk wedges nothing. Each state directory here lives on a small tmpfs of its
//! own (6 MiB, root only), which a run's output or another file fills for real.

use crate::harness::*;

/// The log of run `id`, read from its file.
fn log_of(dir: &StateDir, id: i64) -> String {
    let run = run_of(dir, id);
    std::fs::read_to_string(run["log_path"].as_str().unwrap()).unwrap_or_default()
}

#[test]
fn a_run_whose_output_would_fill_the_disk_ends_recorded_and_says_what_was_dropped() {
    let dir = StateDir::on_tmpfs("6m");
    dir.status();
    // 20 MB of output onto a 6 MiB disk (the per-run cap is 32 MiB, so only the reserve
    // stops it).
    add_job(
        &dir,
        "flood",
        &["--every", "1h"],
        "head -c 20000000 /dev/zero | tr '\\0' x; echo done",
    );
    let id = json(&dir, &["run", "flood"])["id"].as_i64().unwrap();
    // The server answers while the run writes.
    wait_until("the flood has ended", || {
        assert!(dir.status()["pid"].is_number());
        // One read: two could see `queued` and then `running`, each passing one half.
        let status = run_of(&dir, id)["status"].clone();
        status != "running" && status != "queued"
    });
    let run = run_of(&dir, id);
    assert_eq!(run["status"], "succeeded", "{run}");
    let log = log_of(&dir, id);
    assert!(
        log.contains("bytes of output dropped: the disk holding the log had"),
        "{}",
        &log[log.len().saturating_sub(400)..]
    );
    assert!(log.contains("kept free for the ledger (logs.keep_free)"));
    // The disk stays nearly full, and status and doctor say so; the ledger still records.
    let status = dir.status();
    let disk = &status["disk"];
    assert!(
        disk["free_bytes"].as_u64().unwrap() < 2 * disk["reserve_bytes"].as_u64().unwrap(),
        "{disk}"
    );
    let text = text(&dir.run(&["status"]).stdout);
    assert!(
        text.contains("warning: the disk holding the state directory"),
        "{text}"
    );
    // Exit 1 when a problem needs a person: a disk below its reserve is one.
    let out = dir.run(&["doctor", "--json"]);
    let doctor: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let check = doctor["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "disk")
        .unwrap()
        .clone();
    assert_ne!(check["health"], "ok", "{check}");
    let second = json(&dir, &["run", "flood"])["id"].as_i64().unwrap();
    wait_status(&dir, second, "succeeded");
}

#[test]
fn a_disk_filled_by_another_file_refuses_new_runs_and_recovers_when_space_returns() {
    let dir = StateDir::on_tmpfs("6m");
    dir.status();
    add_job(&dir, "small", &["--every", "1h"], "echo fine");
    let first = json(&dir, &["run", "small"])["id"].as_i64().unwrap();
    wait_status(&dir, first, "succeeded");
    // Something else takes every byte left.
    let filler = dir.disk().join("filler");
    {
        use std::io::Write;
        let mut file = std::fs::File::create(&filler).unwrap();
        let block = vec![0u8; 64 * 1024];
        while file.write_all(&block).is_ok() {}
        let _ = file.sync_all();
    }
    // A new run is refused, clearly, and the server goes on answering.
    let out = dir.run(&["run", "small"]);
    assert!(!out.status.success(), "a run was admitted on a full disk");
    let said = text(&out.stderr);
    assert!(said.contains("disk is full"), "{said}");
    assert!(dir.status()["pid"].is_number());
    // Space returns: everything goes on, nothing lost.
    std::fs::remove_file(&filler).unwrap();
    let next = json(&dir, &["run", "small"])["id"].as_i64().unwrap();
    wait_status(&dir, next, "succeeded");
    assert_eq!(run_of(&dir, first)["status"], "succeeded");
    let doctor = json(&dir, &["doctor"]);
    let ledger = doctor["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "ledger")
        .unwrap()
        .clone();
    assert_eq!(ledger["health"], "ok", "{ledger}");
}
