//! Retention end to end: `stead prune` (and its dry run) by a job's `--keep-runs`, the
//! bound on all run logs, the owed run that is never pruned, and the server pruning by
//! itself on its interval.

use std::path::PathBuf;

use serde_json::Value;

use crate::harness::*;

/// A state directory whose server prunes only when asked (its periodic prune is an hour
/// away; the one at start finds nothing).
fn pruned_on_request() -> StateDir {
    let mut dir = StateDir::new();
    dir.set_env("STEAD_RETENTION_INTERVAL_MS", "3600000");
    dir
}

fn run_waited(dir: &StateDir, job: &str) -> i64 {
    let run = json(dir, &["run", job, "--wait"]);
    assert_eq!(run["status"], "succeeded", "{run}");
    run["id"].as_i64().unwrap()
}

/// The ids of the job's runs the ledger holds, oldest first.
fn run_ids(dir: &StateDir, job: &str) -> Vec<i64> {
    let runs = json(dir, &["runs", "--job", job, "--limit", "1000"]);
    let mut ids: Vec<i64> = runs
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_i64().unwrap())
        .collect();
    ids.sort_unstable();
    ids
}

fn logs_dir(dir: &StateDir) -> PathBuf {
    dir.path().join("logs").join("runs")
}

/// The ids of the run logs on disk, oldest first.
fn log_ids(dir: &StateDir) -> Vec<i64> {
    let mut ids: Vec<i64> = std::fs::read_dir(logs_dir(dir))
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .filter_map(|e| e.file_name().to_str()?.strip_suffix(".log")?.parse().ok())
                .collect()
        })
        .unwrap_or_default();
    ids.sort_unstable();
    ids
}

fn ids_of(value: &Value) -> Vec<i64> {
    value
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_i64().unwrap())
        .collect()
}

fn log_size(dir: &StateDir, id: i64) -> u64 {
    std::fs::metadata(logs_dir(dir).join(format!("{id}.log")))
        .unwrap()
        .len()
}

#[test]
fn keep_runs_keeps_the_newest_five_of_twelve_after_a_dry_run_that_deletes_nothing() {
    let dir = pruned_on_request();
    add_job(
        &dir,
        "tick",
        &["--keep-runs", "5"],
        "echo tick $STEAD_RUN_ID",
    );
    let ids: Vec<i64> = (0..12).map(|_| run_waited(&dir, "tick")).collect();
    assert_eq!(log_ids(&dir), ids);

    let dry = json(&dir, &["prune", "--dry-run"]);
    assert_eq!(dry["dry_run"], true, "{dry}");
    assert_eq!(dry["runs"], 7, "{dry}");
    assert_eq!(ids_of(&dry["run_ids"]), ids[..7]);
    assert_eq!(dry["jobs"][0]["job"], "tick");
    assert_eq!(dry["jobs"][0]["runs"], 7);
    assert_eq!(run_ids(&dir, "tick"), ids, "a dry run deletes no row");
    assert_eq!(log_ids(&dir), ids, "a dry run deletes no log");
    let said = dir.run(&["prune", "--dry-run"]);
    assert!(
        text(&said.stdout).starts_with("would remove 7 runs and 0 more logs"),
        "{}",
        text(&said.stdout)
    );

    let done = json(&dir, &["prune"]);
    assert_eq!(done["dry_run"], false);
    assert_eq!(ids_of(&done["run_ids"]), ids[..7]);
    assert!(done["log_bytes"].as_u64().unwrap() > 0, "{done}");
    assert_eq!(run_ids(&dir, "tick"), ids[7..]);
    assert_eq!(log_ids(&dir), ids[7..]);
    // Nothing more to do.
    let again = json(&dir, &["prune"]);
    assert_eq!(again["runs"], 0, "{again}");
    // The job says what it keeps.
    let shown = dir.run(&["job", "show", "tick"]);
    assert!(
        text(&shown.stdout).contains("keep runs"),
        "{}",
        text(&shown.stdout)
    );
}

#[test]
fn logs_max_total_bounds_all_run_logs_oldest_first_and_keeps_the_rows() {
    let mut dir = pruned_on_request();
    dir.set_env("STEAD_RETENTION_LOGS_MAX_TOTAL_BYTES", "3000");
    add_job(&dir, "big", &[], "head -c 1000 /dev/zero | tr '\\0' x");
    let ids: Vec<i64> = (0..6).map(|_| run_waited(&dir, "big")).collect();
    let sizes: Vec<u64> = ids.iter().map(|id| log_size(&dir, *id)).collect();
    // Oldest first until what is left fits.
    let mut total: u64 = sizes.iter().sum();
    let mut expected = Vec::new();
    for (id, size) in ids.iter().zip(&sizes) {
        if total <= 3000 {
            break;
        }
        total -= size;
        expected.push(*id);
    }
    assert!(!expected.is_empty() && expected.len() < ids.len());

    let pruned = json(&dir, &["prune"]);
    assert_eq!(pruned["runs"], 0, "{pruned}");
    assert_eq!(ids_of(&pruned["log_ids"]), expected, "{pruned}");
    assert_eq!(log_ids(&dir), ids[expected.len()..]);
    assert_eq!(run_ids(&dir, "big"), ids, "the rows are kept");

    let first = run_of(&dir, ids[0]);
    let when = first["log_pruned_at"].as_str().expect("log_pruned_at");
    let out = dir.run(&["logs", &ids[0].to_string()]);
    assert_eq!(out.status.code(), Some(1));
    let said = text(&out.stderr);
    assert!(
        said.contains(&format!("log was pruned on {when} by retention")),
        "{said}"
    );
    // A kept log reads as before.
    let kept = ids[expected.len()];
    let out = dir.run(&["logs", &kept.to_string()]);
    assert!(out.status.success());
    assert_eq!(out.stdout.len() as u64, log_size(&dir, kept));
}

#[test]
fn an_owed_run_survives_pruning_past_every_limit() {
    let mut dir = pruned_on_request();
    // Its debt stays unsettled for the whole test.
    dir.set_env("STEAD_RESUME_DELAY_MS", "3600000");
    dir.set_env("STEAD_RETENTION_RUNS_MAX_AGE_MS", "1");
    dir.set_env("STEAD_RETENTION_LOGS_MAX_AGE_MS", "1");
    dir.set_env("STEAD_RETENTION_LOGS_MAX_TOTAL_BYTES", "1");
    let hang = dir.path().join("hang");
    let started = dir.path().join("started");
    std::fs::create_dir_all(dir.path()).unwrap();
    std::fs::write(&hang, "").unwrap();
    let script = format!(
        "echo begun; if [ -e {hang} ]; then touch {started}; while :; do sleep 0.05; done; fi",
        hang = hang.display(),
        started = started.display()
    );
    add_job(
        &dir,
        "cut",
        &["--keep-runs", "1", "--concurrency", "allow"],
        &script,
    );
    let owed = json(&dir, &["run", "cut"])["id"].as_i64().unwrap();
    let running = wait_status(&dir, owed, "running");
    // Begun, and its first line copied to the log (the monitor copies the command's
    // output as it comes: a crash before the copy would lose it).
    let log = std::path::PathBuf::from(running["log_path"].as_str().unwrap());
    wait_until("the run has begun and its log says so", || {
        started.exists() && std::fs::read_to_string(&log).is_ok_and(|text| text.contains("begun"))
    });
    kill_monitor_and_group(monitor_of(&running));
    let cut = wait_status(&dir, owed, "interrupted");
    assert!(cut["resolution"].is_null(), "{cut}");
    std::fs::remove_file(&hang).unwrap();
    let later: Vec<i64> = (0..3).map(|_| run_waited(&dir, "cut")).collect();

    let pruned = json(&dir, &["prune"]);
    assert_eq!(ids_of(&pruned["run_ids"]), later[..2], "{pruned}");
    assert!(!ids_of(&pruned["log_ids"]).contains(&owed), "{pruned}");
    assert_eq!(run_ids(&dir, "cut"), [owed, later[2]]);
    let kept = run_of(&dir, owed);
    assert_eq!(kept["status"], "interrupted");
    assert!(kept["resolution"].is_null(), "{kept}");
    assert!(kept.get("log_pruned_at").is_none(), "{kept}");
    assert!(log_ids(&dir).contains(&owed), "the owed run keeps its log");
    let out = dir.run(&["logs", &owed.to_string()]);
    assert!(text(&out.stdout).contains("begun"), "{}", text(&out.stdout));
}

#[test]
fn the_server_prunes_by_itself_on_its_interval() {
    let mut dir = StateDir::new();
    dir.set_env("STEAD_RETENTION_INTERVAL_MS", "200");
    add_job(&dir, "often", &["--keep-runs", "2"], "echo often");
    let ids: Vec<i64> = (0..5).map(|_| run_waited(&dir, "often")).collect();
    wait_until("the server pruned to the newest two runs", || {
        run_ids(&dir, "often") == ids[3..] && log_ids(&dir) == ids[3..]
    });
    // The server's log is written by a thread of its own: the line follows the prune.
    wait_until("the server's log says it pruned", || {
        dir.log().contains("pruned by retention")
    });
}

#[test]
fn retention_settings_are_checked() {
    let dir = pruned_on_request();
    dir.write_config("[retention]\nlogs_max_total_bytes = 0\n");
    let out = dir.run(&["status"]);
    assert!(!out.status.success());
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(78), "{stderr}");
    assert!(
        stderr.contains("invalid [retention] logs_max_total_bytes = 0 in ")
            && stderr.contains("config.toml: it must be greater than zero"),
        "{stderr}"
    );
}

#[test]
fn a_job_file_sets_keep_runs_and_keep_for_and_bad_values_are_refused() {
    let dir = pruned_on_request();
    std::fs::create_dir_all(dir.path()).unwrap();
    let file = dir.path().join("jobs.toml");
    std::fs::write(
        &file,
        "[[job]]\nname = \"kept\"\ncommand = [\"true\"]\nkeep_runs = 3\nkeep_for = \"720h\"\n",
    )
    .unwrap();
    json(&dir, &["apply", file.to_str().unwrap()]);
    let job = json(&dir, &["job", "show", "kept"]);
    assert_eq!(job["keep_runs"], 3, "{job}");
    assert!(job["keep_for"].is_string(), "{job}");
    let out = dir.run(&["job", "add", "bad", "--keep-for", "soon", "--", "true"]);
    assert!(!out.status.success());
    assert!(text(&out.stderr).contains("soon"), "{}", text(&out.stderr));
    let out = dir.run(&["job", "add", "none", "--keep-runs", "0", "--", "true"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
}
