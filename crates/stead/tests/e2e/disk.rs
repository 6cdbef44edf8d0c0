//! A full disk wedges nothing. Each state directory here lives on a small tmpfs of its
//! own (6 MiB, root only), which a run's output or another file fills for real.

use crate::harness::*;

/// A job that writes `bytes` of `c`, then runs `then`.
fn writes(dir: &StateDir, job: &str, bytes: u64, c: char, then: &str) {
    add_job(
        dir,
        job,
        &["--every", "1h", "--concurrency", "allow"],
        &format!("head -c {bytes} /dev/zero | tr '\\0' {c}; {then}"),
    );
}

/// The size of run `id`'s log file; 0 when there is none.
fn log_size(dir: &StateDir, id: i64) -> u64 {
    let run = run_of(dir, id);
    std::fs::metadata(run["log_path"].as_str().unwrap()).map_or(0, |m| m.len())
}

/// Runs the job `flood`, 20 MB of output onto the disk (the per-run cap is 32 MiB, so
/// only the reserve stops it), until it has ended; answers its run and its log, held
/// open from before the flood: retention may prune the log as soon as the run has
/// ended, and the open file is still read whole.
fn run_flood(dir: &StateDir) -> (i64, std::fs::File) {
    let gate = dir.root().join("gate");
    add_job(
        dir,
        "flood",
        &["--every", "1h"],
        &format!(
            "echo start; while [ ! -e {} ]; do sleep 0.05; done; \
             head -c 20000000 /dev/zero | tr '\\0' x; echo done",
            gate.display()
        ),
    );
    let id = json(dir, &["run", "flood"])["id"].as_i64().unwrap();
    let path = run_of(dir, id)["log_path"].as_str().unwrap().to_string();
    let mut file = None;
    wait_until("the flood's log is there", || {
        file = std::fs::File::open(&path).ok();
        file.is_some()
    });
    std::fs::write(&gate, "").unwrap();
    // The server answers while the run writes.
    wait_until("the flood has ended", || {
        assert!(dir.status()["pid"].is_number());
        // One read: two could see `queued` and then `running`, each passing one half.
        let status = run_of(dir, id)["status"].clone();
        status != "running" && status != "queued"
    });
    (id, file.unwrap())
}

#[test]
fn a_run_whose_output_would_fill_the_disk_ends_recorded_and_says_what_was_dropped() {
    let dir = StateDir::on_tmpfs("6m");
    dir.status();
    let (id, mut file) = run_flood(&dir);
    let run = run_of(&dir, id);
    assert_eq!(run["status"], "succeeded", "{run}");
    let mut log = String::new();
    std::io::Read::read_to_string(&mut file, &mut log).unwrap();
    assert!(
        log.contains("bytes of output dropped: the disk holding the log had"),
        "{}",
        &log[log.len().saturating_sub(400)..]
    );
    assert!(log.contains("kept free for the ledger (logs.keep_free)"));
    let second = json(&dir, &["run", "flood"])["id"].as_i64().unwrap();
    wait_status(&dir, second, "succeeded");
}

/// A disk kept below its reserve by the logs of runs that have ended is given back by
/// retention at once: the largest logs go first, never an owed run's nor one in flight,
/// recorded as pruned, until the disk is back above its reserve; later runs' output is
/// logged again.
#[test]
fn a_disk_filled_by_run_logs_is_given_back_largest_log_first() {
    let mut dir = StateDir::on_tmpfs("6m");
    // A cut run stays owed for the whole test.
    dir.set_env("STEAD_RESUME_DELAY_MS", "3600000");
    dir.status();
    // An older, small log; a cut run's log and a running run's, each larger than what
    // the flood will leave itself room for.
    writes(&dir, "small", 150_000, 's', "true");
    let small = json(&dir, &["run", "small"])["id"].as_i64().unwrap();
    wait_status(&dir, small, "succeeded");
    writes(&dir, "cut", 2_000_000, 'c', "sleep 300");
    writes(&dir, "busy", 2_000_000, 'b', "sleep 300");
    let cut = json(&dir, &["run", "cut"])["id"].as_i64().unwrap();
    let busy = json(&dir, &["run", "busy"])["id"].as_i64().unwrap();
    wait_until("the logs are written", || {
        log_size(&dir, cut) == 2_000_000 && log_size(&dir, busy) == 2_000_000
    });
    signal(monitor_of(&run_of(&dir, cut)), libc::SIGTERM);
    let cut_run = wait_status(&dir, cut, "interrupted");
    assert!(cut_run["resolution"].is_null(), "owed: {cut_run}");
    let kept: Vec<(i64, u64)> = [small, cut, busy]
        .into_iter()
        .map(|id| (id, log_size(&dir, id)))
        .collect();

    let (flood, log) = run_flood(&dir);
    assert_eq!(run_of(&dir, flood)["status"], "succeeded");
    let flooded = log.metadata().unwrap().len();
    // An open file's space is not given back: let go of it.
    drop(log);
    assert!(
        flooded > 500_000 && flooded < 2_000_000,
        "the flood's log ({flooded} bytes) is the largest that may go, not the largest"
    );

    let mut disk = serde_json::Value::Null;
    wait_until_within(
        "the disk is back above its reserve",
        std::time::Duration::from_secs(30),
        || {
            disk = dir.status()["disk"].clone();
            disk["free_bytes"].as_u64().unwrap() >= disk["reserve_bytes"].as_u64().unwrap()
        },
    );
    let pruned = run_of(&dir, flood);
    assert!(pruned["log_pruned_at"].is_string(), "{pruned}");
    assert_eq!(log_size(&dir, flood), 0);
    // Enough went: the older, smaller log stays, and so do the owed and running runs'.
    for (id, size) in kept {
        assert_eq!(log_size(&dir, id), size, "run {id}'s log");
        assert!(run_of(&dir, id)["log_pruned_at"].is_null(), "run {id}");
    }
    assert_eq!(doctor_check(&dir, "disk")["health"], "ok", "{disk}");
    // Output is logged again.
    add_job(&dir, "later", &[], "echo again");
    let later = json(&dir, &["run", "later"])["id"].as_i64().unwrap();
    wait_status(&dir, later, "succeeded");
    let out = dir.run(&["logs", &later.to_string()]);
    assert_eq!(text(&out.stdout).trim(), "again");
    json(&dir, &["cancel", &busy.to_string()]);
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
    // Status and doctor say so (exit 1: a problem needs a person).
    let status = text(&dir.run(&["status"]).stdout);
    assert!(
        status.contains("warning: the disk holding the state directory"),
        "{status}"
    );
    assert_eq!(dir.run(&["doctor"]).status.code(), Some(1));
    assert_ne!(doctor_check(&dir, "disk")["health"], "ok");
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
