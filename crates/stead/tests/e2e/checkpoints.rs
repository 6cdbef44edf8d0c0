//! Checkpoints and steps end to end: a script of three `stead step`s cut in its last
//! step (its monitor and processes killed, as a reboot does) or failing genuinely in its
//! second, whose resume or retry skips what completed and reads what was recorded; a
//! cut run's command still alive after its resume started, refused; and the refusals of
//! a wrong token, an unknown run, a write from outside any run and the limits.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::harness::*;

const STEAD: &str = env!("CARGO_BIN_EXE_stead");

fn lines(file: &Path) -> usize {
    std::fs::read_to_string(file)
        .unwrap_or_default()
        .lines()
        .count()
}

fn read(file: &Path) -> String {
    std::fs::read_to_string(file)
        .unwrap_or_default()
        .trim()
        .to_string()
}

/// The files a three-step script writes in `dir`: one line per time each step ran.
struct Steps {
    root: PathBuf,
}

impl Steps {
    fn new(dir: &StateDir) -> Self {
        Steps {
            root: dir.root().to_path_buf(),
        }
    }

    fn file(&self, name: &str) -> PathBuf {
        self.root.join(name)
    }

    /// fetch, a checkpoint set once, transform, then upload (which reads the
    /// checkpoint); `upload_first` and `transform_first` run in the step on attempt 1
    /// only (to block there, or fail).
    fn script(&self, transform_first: &str, upload_first: &str) -> String {
        let f = |n: &str| self.file(n).display().to_string();
        format!(
            "set -e
export S={STEAD}
$S step fetch -- sh -c 'echo $STEAD_ATTEMPT >> {fetch}'
$S checkpoint get draft >/dev/null || $S checkpoint set draft \"draft of attempt $STEAD_ATTEMPT\"
$S step transform -- sh -c 'echo $STEAD_ATTEMPT >> {transform}; if [ $STEAD_ATTEMPT = 1 ]; then {transform_first}; fi'
$S step upload -- sh -c 'echo $STEAD_ATTEMPT >> {upload}; if [ $STEAD_ATTEMPT = 1 ]; then {upload_first}; fi; $S checkpoint get draft > {uploaded}'
",
            fetch = f("fetch"),
            transform = f("transform"),
            upload = f("upload"),
            uploaded = f("uploaded"),
        )
    }

    /// How many times fetch, transform and upload ran.
    fn counts(&self) -> (usize, usize, usize) {
        let ran = |step: &str| lines(&self.file(step));
        (ran("fetch"), ran("transform"), ran("upload"))
    }
}

fn wait_ended(dir: &StateDir, id: i64) -> Value {
    let mut run = Value::Null;
    wait_until(&format!("run {id} ended"), || {
        run = run_of(dir, id);
        run["ended_at"].is_string()
    });
    run
}

fn log_of(run: &Value) -> String {
    std::fs::read_to_string(run["log_path"].as_str().unwrap()).unwrap_or_default()
}

fn checkpoints(dir: &StateDir, run: i64) -> Value {
    json(dir, &["checkpoint", "ls", "--run", &run.to_string()])
}

fn step_names_and_attempts(all: &Value) -> Vec<(String, i64)> {
    all["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["name"].as_str().unwrap().to_string(),
                s["attempt"].as_i64().unwrap(),
            )
        })
        .collect()
}

#[test]
fn a_resume_skips_the_completed_steps_and_reads_the_checkpoint_set_before_the_cut() {
    let mut dir = StateDir::new();
    dir.set_env("STEAD_RESUME_DELAY_MS", "0");
    let steps = Steps::new(&dir);
    let started = steps.file("upload.started");
    // Blocks the first time only: the job's next run is an attempt 1 too.
    let block = format!(
        "if [ ! -e {0} ]; then touch {0}; while :; do sleep 0.05; done; fi",
        started.display()
    );
    add_job(&dir, "data", &[], &steps.script("true", &block));
    let id = json(&dir, &["run", "data"])["id"].as_i64().unwrap();
    wait_until("the last step started", || started.exists());
    // A reboot: the monitor and every process of the run, killed at once.
    kill_monitor_and_group(monitor_of(&wait_status(&dir, id, "running")));
    wait_status(&dir, id, "interrupted");

    let mut resumed = Vec::new();
    wait_until("the cut run is resumed", || {
        resumed = children_of(&dir, "data", id);
        !resumed.is_empty()
    });
    let resume = resumed[0]["id"].as_i64().unwrap();
    let done = wait_ended(&dir, resume);
    assert_eq!(done["status"], "succeeded", "{done:#}\n{}", log_of(&done));
    assert_eq!(done["trigger"], "resume");

    assert_eq!(
        steps.counts(),
        (1, 1, 2),
        "the completed steps ran once, the cut one again"
    );
    assert_eq!(read(&steps.file("uploaded")), "draft of attempt 1");
    let all = checkpoints(&dir, resume);
    assert_eq!(
        step_names_and_attempts(&all),
        [
            ("fetch".to_string(), 1),
            ("transform".to_string(), 1),
            ("upload".to_string(), 2)
        ],
        "{all:#}"
    );
    assert_eq!(all["checkpoints"][0]["key"], "draft");
    let shown = run_of(&dir, resume);
    assert_eq!(shown["steps"], all["steps"], "show lists the steps");
    assert_eq!(shown["checkpoint_keys"], serde_json::json!(["draft"]));
    assert_eq!(all["checkpoints"][0]["run_id"], id);
    assert_eq!(
        all,
        checkpoints(&dir, id)
            .as_object()
            .map(|o| {
                let mut o = o.clone();
                o.insert("run_id".into(), resume.into());
                Value::Object(o)
            })
            .unwrap(),
        "both attempts read one key"
    );

    // The job's next run starts empty: every step runs.
    let next = json(&dir, &["run", "data"])["id"].as_i64().unwrap();
    wait_status(&dir, next, "succeeded");
    assert_eq!(steps.counts(), (2, 2, 3));
}

#[test]
fn a_retry_after_a_genuine_failure_in_step_two_skips_step_one() {
    let dir = StateDir::new();
    let steps = Steps::new(&dir);
    add_job(
        &dir,
        "data",
        &["--retries", "1", "--retry-delay", "100ms"],
        &steps.script("exit 3", "true"),
    );
    let out = dir.run(&["run", "data", "--wait", "--json"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let last: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        (last["status"].as_str(), last["attempt"].as_i64()),
        (Some("succeeded"), Some(2))
    );
    let first = last["parent_id"].as_i64().unwrap();
    assert_eq!(
        run_of(&dir, first)["exit_code"],
        3,
        "step 2's exit code is the run's"
    );
    assert_eq!(
        steps.counts(),
        (1, 2, 1),
        "the failed step ran again, the completed one did not"
    );
    assert_eq!(read(&steps.file("uploaded")), "draft of attempt 1");
    assert_eq!(
        step_names_and_attempts(&checkpoints(&dir, last["id"].as_i64().unwrap())),
        [
            ("fetch".to_string(), 1),
            ("transform".to_string(), 2),
            ("upload".to_string(), 2)
        ]
    );
}

#[test]
fn a_cut_runs_command_writing_after_its_resume_started_is_refused() {
    let mut dir = StateDir::new();
    dir.set_env("STEAD_RESUME_DELAY_MS", "0");
    let root = dir.root().to_path_buf();
    let f = |n: &str| root.join(n).display().to_string();
    // Attempt 1 leaves a copy of itself out of the run's process group (as a copy on a
    // partitioned host goes on), which writes once told to; attempt 2 writes first and
    // waits until the copy has tried.
    let script = format!(
        "S={STEAD}
if [ $STEAD_ATTEMPT = 1 ]; then
  setsid sh -c 'while [ ! -e {go} ] && [ -d {root} ]; do sleep 0.05; done; $0 checkpoint set owner attempt-1 2> {late_err}; echo $? > {late_rc}' $S &
  touch {started}; while :; do sleep 0.05; done
fi
$S checkpoint set owner attempt-$STEAD_ATTEMPT && touch {resumed}
while [ ! -e {late_rc} ]; do sleep 0.05; done
",
        go = f("go"),
        root = root.display(),
        late_err = f("late.err"),
        late_rc = f("late.rc"),
        started = f("started"),
        resumed = f("resumed"),
    );
    add_job(&dir, "journal", &[], &script);
    let id = json(&dir, &["run", "journal"])["id"].as_i64().unwrap();
    wait_until("the first attempt started", || {
        root.join("started").exists()
    });
    kill_monitor_and_group(monitor_of(&wait_status(&dir, id, "running")));
    wait_until("the resume wrote its checkpoint", || {
        root.join("resumed").exists()
    });
    std::fs::write(root.join("go"), "").unwrap();
    wait_until("the cut copy tried to write", || {
        !read(&root.join("late.rc")).is_empty()
    });
    assert_eq!(read(&root.join("late.rc")), "1");
    let said = read(&root.join("late.err"));
    assert!(
        said.contains("no longer holds its idempotency key"),
        "{said}"
    );
    let resume = children_of(&dir, "journal", id)[0]["id"].as_i64().unwrap();
    wait_status(&dir, resume, "succeeded");
    let all = checkpoints(&dir, resume);
    assert_eq!(all["checkpoints"][0]["value"], "attempt-2", "{all:#}");
    assert_eq!(all["checkpoints"][0]["run_id"], resume);
}

#[test]
fn wrong_tokens_unknown_runs_outsiders_and_limits_are_refused_writing_nothing() {
    let dir = StateDir::new();
    let root = dir.root().to_path_buf();
    let f = |n: &str| root.join(n).display().to_string();
    let script = format!(
        "S={STEAD}
$S checkpoint set kept yes
STEAD_RUN_TOKEN=wrong $S checkpoint set kept no 2> {wrong_err}; echo $? > {wrong_rc}
STEAD_RUN_ID=999999 $S checkpoint set kept no 2> {unknown_err}; echo $? > {unknown_rc}
head -c 65537 /dev/zero | tr '\\0' x | $S checkpoint set big 2> {big_err}; echo $? > {big_rc}
$S checkpoint set 'bad key' v 2> {name_err}; echo $? > {name_rc}
$S checkpoint get missing > {missing_out}; echo $? > {missing_rc}
printf 'from stdin' | $S checkpoint set piped
$S step nope -- false; echo $? > {step_rc}
",
        wrong_err = f("wrong.err"),
        wrong_rc = f("wrong.rc"),
        unknown_err = f("unknown.err"),
        unknown_rc = f("unknown.rc"),
        big_err = f("big.err"),
        big_rc = f("big.rc"),
        name_err = f("name.err"),
        name_rc = f("name.rc"),
        missing_out = f("missing.out"),
        missing_rc = f("missing.rc"),
        step_rc = f("step.rc"),
    );
    add_job(&dir, "edges", &[], &script);
    let out = dir.run(&["run", "edges", "--wait", "--json"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let run: Value = serde_json::from_slice(&out.stdout).unwrap();
    let id = run["id"].as_i64().unwrap();

    let rc = |n: &str| read(&root.join(format!("{n}.rc")));
    let err = |n: &str| read(&root.join(format!("{n}.err")));
    assert_eq!(rc("wrong"), "1");
    assert!(
        err("wrong").contains("is not its own (STEAD_RUN_TOKEN)"),
        "{}",
        err("wrong")
    );
    assert_eq!(rc("unknown"), "1");
    assert!(
        err("unknown").contains("no run 999999"),
        "{}",
        err("unknown")
    );
    assert_eq!(rc("big"), "65");
    assert!(err("big").contains("at most 65536 bytes"), "{}", err("big"));
    assert_eq!(rc("name"), "65");
    assert!(
        err("name").contains("invalid checkpoint key"),
        "{}",
        err("name")
    );
    assert_eq!(
        (rc("missing"), read(&root.join("missing.out"))),
        ("1".into(), String::new())
    );
    assert_eq!(rc("step"), "1", "a failing step's exit code passes through");

    let all = checkpoints(&dir, id);
    let kept: Vec<(&str, &str)> = all["checkpoints"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["key"].as_str().unwrap(), c["value"].as_str().unwrap()))
        .collect();
    assert_eq!(
        kept,
        [("kept", "yes"), ("piped", "from stdin")],
        "nothing refused was written"
    );
    assert!(
        all["steps"].as_array().unwrap().is_empty(),
        "a failed step is not completed"
    );

    // From outside any run: a usage error, nothing sent.
    let out = dir.run(&["checkpoint", "set", "kept", "outside"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("not inside a stead run"),
        "{}",
        text(&out.stderr)
    );
    let out = dir.run(&["step", "x", "--", "true"]);
    assert_eq!(out.status.code(), Some(2));
    let out = dir.run(&["checkpoint", "get", "kept", "--run", &id.to_string()]);
    assert_eq!(text(&out.stdout), "yes\n");
}

#[test]
fn a_landed_check_reads_the_cut_runs_checkpoints_as_its_receipt() {
    let mut dir = StateDir::new();
    dir.set_env("STEAD_RESUME_DELAY_MS", "0");
    let started = dir.root().join("started");
    // The work records its receipt, then is cut before it could end.
    let script = format!(
        "{STEAD} checkpoint set receipt posted-42; touch {0}; while :; do sleep 0.05; done",
        started.display()
    );
    let check = format!("[ \"$({STEAD} checkpoint get receipt)\" = posted-42 ]");
    add_job(&dir, "post", &["--landed-check", &check], &script);
    let id = json(&dir, &["run", "post"])["id"].as_i64().unwrap();
    wait_until("the work recorded its receipt", || started.exists());
    kill_monitor_and_group(monitor_of(&wait_status(&dir, id, "running")));
    let mut run = Value::Null;
    wait_until("the cut run is settled", || {
        run = run_of(&dir, id);
        run["resolution"].is_string()
    });
    assert_eq!(run["status"], "succeeded", "{run:#}");
    assert_eq!(run["reason"], "landed, proven by receipt");
    assert!(
        children_of(&dir, "post", id).is_empty(),
        "a landed run is not resumed"
    );
}

#[test]
fn a_step_whose_command_stopped_the_server_is_recorded_by_the_next_one() {
    let dir = StateDir::new();
    // The step's command stops the server that answered before it; the step's record
    // goes to the server its client starts then.
    add_job(
        &dir,
        "restarts",
        &[],
        &format!("{STEAD} step stop-server -- {STEAD} stop --json"),
    );
    let id = json(&dir, &["run", "restarts"])["id"].as_i64().unwrap();
    let run = wait_ended(&dir, id);
    assert_eq!(run["status"], "succeeded", "{run:#}\n{}", log_of(&run));
    assert_eq!(
        step_names_and_attempts(&checkpoints(&dir, id)),
        [("stop-server".to_string(), 1)]
    );
}
