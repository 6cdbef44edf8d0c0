//! The per-run monitor (`stead monitor`) driven as the server drives it: a queued run in
//! a real ledger, the plan on stdin, and the run's row watched until it settles.
//!
//! Every command gets a marker in its environment, inherited by its descendants, so a
//! test can tell whether anything it started is still alive, and a guard kills all of
//! it (and the monitor) when the test ends, even when it fails.

use std::collections::BTreeMap;
use std::io::Write;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use jiff::{SignedDuration, Timestamp};
use stead_core::lease::{ClaimOutcome, Claimant};
use stead_core::locator::{LedgerRef, StoreLocator};
use stead_core::plan::Planner;
use stead_core::records::{Fence, NewRun};
use stead_core::runs::{MonitorPlan, MonitorStart, RunEnd, ServerLink};
use stead_protocol::{Concurrency, JobSpec, KeepFree, Run, RunStatus, Trigger};
use stead_store::sqlite::SqliteStore;
use stead_store::{Catalog, Lease, RunLedger};
use stead_sys::identity;

/// Generous upper bound for anything a test waits on (a loaded 2-core machine).
const PATIENCE: Duration = Duration::from_secs(20);

/// The environment variable that marks a test's processes.
const MARK: &str = "STEAD_MONITOR_TEST_MARK";

/// A ledger with one job, ready to admit runs of it.
struct Ledger {
    tmp: tempfile::TempDir,
    store: SqliteStore,
    epoch: i64,
    job_id: i64,
    marker: String,
}

impl Ledger {
    fn new() -> Self {
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let tmp = tempfile::Builder::new()
            .prefix("stead-monitor.")
            .tempdir_in("/tmp")
            .expect("temp dir");
        let store = SqliteStore::open(&tmp.path().join("stead.db")).expect("ledger opens");
        let me = Claimant::new(
            "monitor-test".into(),
            std::process::id(),
            identity::current().unwrap(),
        );
        let now = Timestamp::now();
        let epoch = match store
            .claim_lease(&me, now, SignedDuration::from_hours(1), None)
            .unwrap()
        {
            ClaimOutcome::Claimed(lease) => lease.epoch,
            ClaimOutcome::Held(row) => panic!("a fresh ledger's lease is held: {row:?}"),
        };
        let spec = JobSpec {
            name: "job".into(),
            cron: None,
            tz: None,
            every: None,
            command: vec!["true".into()],
            shell: false,
            cwd: None,
            env: BTreeMap::new(),
            timeout: None,
            concurrency: Concurrency::Allow,
            enabled: true,
            ..JobSpec::default()
        };
        let job_id = store.job_insert(&spec, now, epoch).unwrap().id;
        let marker = format!(
            "{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        );
        Self {
            tmp,
            store,
            epoch,
            job_id,
            marker,
        }
    }

    fn path(&self) -> &Path {
        self.tmp.path()
    }

    /// Admits a queued run of `argv` and returns its plan, short timings already set.
    fn admit(&self, argv: &[&str]) -> MonitorPlan {
        let new = NewRun {
            job_id: self.job_id,
            job: "job".into(),
            trigger: Trigger::OnDemand,
            scheduled_at: None,
            idempotency_key: None,
            parent_id: None,
            attempt: 1,
            machine_id: "test-machine".into(),
            boot_id: "test-boot".into(),
            concurrency: Concurrency::Allow,
            created_at: Timestamp::now(),
            fired_through: None,
            fence: Fence::Host,
            original_trigger: None,
            resolves: None,
            skip_reason: None,
            skipped_fires: Vec::new(),
            missed: false,
            params: None,
            retry: stead_core::records::RetryBudget::FromJob,
            queue: None,
            waiting: false,
            not_before: None,
        };
        let planner = Planner {
            ledger: LedgerRef::Sqlite {
                path: self.path().join("stead.db"),
            },
            state_dir: self.path().to_path_buf(),
            log_dir: self.path().join("logs"),
            power_supplies: None,
        };
        let spec = JobSpec {
            name: "job".into(),
            command: argv.iter().map(|a| a.to_string()).collect(),
            env: BTreeMap::from([(MARK.to_string(), self.marker.clone())]),
            ..JobSpec::default()
        };
        let admission = self
            .store
            .run_admit(&new, &spec, &planner, self.epoch)
            .unwrap();
        assert_eq!(admission.run.status, RunStatus::Queued);
        let plan = admission.plan.expect("a queued run has a plan");
        // Short timings, and nothing of the retry budget a job would give.
        MonitorPlan {
            kill_grace_ms: 2_000,
            log_max_bytes: 1024 * 1024,
            retry: None,
            ..plan
        }
    }

    /// Starts `stead monitor` with `plan` on stdin, as the server does.
    fn start(&self, plan: &MonitorPlan) -> Monitor {
        self.start_through(plan, None)
    }

    /// [`Ledger::start`] telling the monitor to record through the server at `socket`, as
    /// a server of a shared ledger does.
    fn start_through(&self, plan: &MonitorPlan, socket: Option<&Path>) -> Monitor {
        let mut child = Command::new(env!("CARGO_BIN_EXE_steadd"))
            .arg("monitor")
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            // Its own group, so that the guard can kill it without killing the test.
            .process_group(0)
            .spawn()
            .expect("stead monitor starts");
        let start = MonitorStart {
            plan: plan.clone(),
            store: StoreLocator::Sqlite {
                path: self.path().join("stead.db"),
            },
            server: socket.map(|socket| ServerLink {
                socket: socket.to_path_buf(),
                lease_ms: 30_000,
                heartbeat_ms: 250,
                confirm_ownership: false,
                linked: false,
            }),
            log_keep_free: KeepFree::Bytes(0),
            marked: false,
            secret_store: Some(self.path().join("secrets.json")),
        };
        let json = serde_json::to_vec(&start).unwrap();
        child.stdin.take().unwrap().write_all(&json).unwrap();
        Monitor {
            child,
            marker: self.marker.clone(),
        }
    }

    fn run(&self, id: i64) -> Run {
        self.store.run_get(id).unwrap().expect("the run exists")
    }

    /// Waits for the run to leave `queued`, and returns its monitor's pid.
    fn running(&self, id: i64) -> u32 {
        wait_until("the run is running", || {
            self.run(id).status != RunStatus::Queued
        });
        let run = self.run(id);
        assert_eq!(run.status, RunStatus::Running, "{run:?}");
        run.monitor_pid.expect("a running run names its monitor")
    }

    /// Waits for the run to end, and returns its row.
    fn settled(&self, id: i64) -> Run {
        wait_until("the run is settled", || self.run(id).status.is_terminal());
        self.run(id)
    }

    /// Live processes started by this ledger's runs.
    fn leftovers(&self) -> Vec<u32> {
        marked(&self.marker)
    }
}

/// A running `stead monitor`, killed with everything its runs started when dropped.
struct Monitor {
    child: Child,
    marker: String,
}

impl Monitor {
    fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Waits for the monitor to exit, and returns its exit code.
    fn exit_code(&mut self) -> Option<i32> {
        let deadline = Instant::now() + PATIENCE;
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status.code();
            }
            assert!(Instant::now() < deadline, "the monitor never exited");
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

impl Drop for Monitor {
    fn drop(&mut self) {
        signal(-(self.child.id() as i32), libc::SIGKILL);
        for pid in marked(&self.marker) {
            signal(pid as i32, libc::SIGKILL);
        }
        let _ = self.child.wait();
    }
}

/// Live (not zombie) processes whose environment carries `marker`.
fn marked(marker: &str) -> Vec<u32> {
    let needle = format!("{MARK}={marker}");
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/environ"))
                .is_ok_and(|env| env.split(|&b| b == 0).any(|var| var == needle.as_bytes()))
        })
        .filter(|&pid| identity::of_pid(pid).is_ok_and(|id| id.is_some()))
        .collect()
}

fn signal(pid: i32, sig: i32) {
    // SAFETY: kill(2) with a pid (or negated group id) and a signal number.
    unsafe {
        libc::kill(pid, sig);
    }
}

/// Waits until `cond` holds, failing the test with `what` after `PATIENCE`.
fn wait_until(what: &str, mut cond: impl FnMut() -> bool) {
    let deadline = Instant::now() + PATIENCE;
    while !cond() {
        assert!(Instant::now() < deadline, "timed out waiting until {what}");
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn log_of(run: &Run) -> String {
    String::from_utf8_lossy(&std::fs::read(PathBuf::from(&run.log_path)).unwrap_or_default())
        .into_owned()
}

#[test]
fn exit_zero_succeeds() {
    let ledger = Ledger::new();
    let plan = ledger.admit(&["true"]);
    let mut monitor = ledger.start(&plan);
    let run = ledger.settled(plan.run_id);
    assert_eq!(run.status, RunStatus::Succeeded, "{run:?}");
    assert_eq!(
        (run.exit_code, run.signal, run.reason),
        (Some(0), None, None)
    );
    assert_eq!(run.monitor_pid, Some(monitor.pid()));
    assert!(run.started_at.is_some() && run.ended_at.is_some());
    assert_eq!(monitor.exit_code(), Some(0));
}

#[test]
fn a_monitor_whose_server_cannot_be_reached_records_its_run_itself() {
    let ledger = Ledger::new();
    let plan = ledger.admit(&["sh", "-c", "echo through"]);
    // No server listens there: each write goes around it, on a connection of its own.
    let gone = ledger.path().join("no-server.sock");
    let _monitor = ledger.start_through(&plan, Some(&gone));
    let run = ledger.settled(plan.run_id);
    assert_eq!(run.status, RunStatus::Succeeded, "{run:?}");
    assert!(
        run.monitor_pid.is_some(),
        "marked running by the monitor itself"
    );
    assert!(log_of(&run).contains("through"));
}

#[test]
fn a_nonzero_exit_fails_with_its_code() {
    let ledger = Ledger::new();
    let plan = ledger.admit(&["sh", "-c", "exit 3"]);
    let mut monitor = ledger.start(&plan);
    let run = ledger.settled(plan.run_id);
    assert_eq!(run.status, RunStatus::Failed, "{run:?}");
    assert_eq!(run.exit_code, Some(3));
    assert_eq!(run.reason.as_deref(), Some("exited with code 3"));
    assert_eq!(monitor.exit_code(), Some(0));
}

#[test]
fn a_command_killed_by_a_signal_fails_with_it() {
    let ledger = Ledger::new();
    let plan = ledger.admit(&["sh", "-c", "kill -KILL $$"]);
    let _monitor = ledger.start(&plan);
    let run = ledger.settled(plan.run_id);
    assert_eq!(run.status, RunStatus::Failed, "{run:?}");
    assert_eq!((run.exit_code, run.signal), (None, Some(9)));
    assert_eq!(run.reason.as_deref(), Some("killed by signal 9 (SIGKILL)"));
}

#[test]
fn both_output_streams_are_logged() {
    let ledger = Ledger::new();
    let plan = ledger.admit(&["sh", "-c", "echo to-stdout; echo to-stderr >&2; echo again"]);
    let _monitor = ledger.start(&plan);
    let run = ledger.settled(plan.run_id);
    assert_eq!(run.status, RunStatus::Succeeded, "{run:?}");
    let log = log_of(&run);
    for line in ["to-stdout\n", "to-stderr\n", "again\n"] {
        assert!(log.contains(line), "{line:?} missing from {log:?}");
    }
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(&run.log_path)
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600);
}

#[test]
fn output_past_the_cap_is_discarded_with_one_note() {
    let ledger = Ledger::new();
    let mut plan = ledger.admit(&["sh", "-c", "for i in $(seq 200); do echo 0123456789; done"]);
    plan.log_max_bytes = 100;
    let _monitor = ledger.start(&plan);
    let run = ledger.settled(plan.run_id);
    assert_eq!(run.status, RunStatus::Succeeded, "{run:?}");
    let log = log_of(&run);
    // The cap falls mid-line, so the note starts a line of its own.
    let kept = &"0123456789\n".repeat(10)[..100];
    let note = "[stead: log truncated at 100 bytes; further output discarded]\n";
    assert_eq!(log, format!("{kept}\n{note}"));
    assert_eq!(log.matches("[stead:").count(), 1, "{log:?}");
}

#[test]
fn a_timeout_kills_the_whole_group() {
    let ledger = Ledger::new();
    let mut plan = ledger.admit(&["sh", "-c", "sleep 30 & sleep 30"]);
    plan.timeout_ms = Some(300);
    let _monitor = ledger.start(&plan);
    let run = ledger.settled(plan.run_id);
    assert_eq!(run.status, RunStatus::Failed, "{run:?}");
    assert_eq!(run.reason.as_deref(), Some("timed out after 300ms"));
    assert_eq!(run.signal, Some(libc::SIGTERM));
    assert_eq!(ledger.leftovers(), Vec::<u32>::new());
}

#[test]
fn a_cancel_kills_every_descendant() {
    let ledger = Ledger::new();
    let plan = ledger.admit(&["sh", "-c", "sleep 300 & sleep 300 & wait"]);
    let mut monitor = ledger.start(&plan);
    let pid = ledger.running(plan.run_id);
    assert_eq!(pid, monitor.pid());
    // The shell and both sleeps: cancel only once the grandchildren exist.
    wait_until("both sleeps run", || ledger.leftovers().len() == 3);
    let started = ledger.leftovers();
    signal(pid as i32, libc::SIGUSR1);
    let run = ledger.settled(plan.run_id);
    assert_eq!(run.status, RunStatus::Cancelled, "{run:?}");
    assert_eq!(run.reason.as_deref(), Some("cancelled"));
    assert_eq!((run.exit_code, run.signal), (None, None));
    assert_eq!(ledger.leftovers(), Vec::<u32>::new());
    assert_eq!(monitor.exit_code(), Some(0));
    // Reaped by the monitor itself, not left as zombies for init.
    for pid in started {
        assert!(
            !Path::new(&format!("/proc/{pid}")).exists(),
            "{pid} not reaped"
        );
    }
}

#[test]
fn a_command_ignoring_sigterm_is_killed_after_the_grace() {
    let ledger = Ledger::new();
    // An ignored signal stays ignored across fork and exec: the sleep ignores it too.
    let mut plan = ledger.admit(&["sh", "-c", "trap '' TERM; sleep 300 & wait"]);
    plan.timeout_ms = Some(300);
    plan.kill_grace_ms = 300;
    let _monitor = ledger.start(&plan);
    let run = ledger.settled(plan.run_id);
    assert_eq!(run.status, RunStatus::Failed, "{run:?}");
    assert_eq!(run.reason.as_deref(), Some("timed out after 300ms"));
    assert_eq!(run.signal, Some(libc::SIGKILL));
    assert_eq!(ledger.leftovers(), Vec::<u32>::new());
}

#[test]
fn sigterm_to_the_monitor_interrupts_the_run() {
    let ledger = Ledger::new();
    let plan = ledger.admit(&["sh", "-c", "sleep 300 & wait"]);
    let mut monitor = ledger.start(&plan);
    let pid = ledger.running(plan.run_id);
    wait_until("the sleep runs", || ledger.leftovers().len() == 2);
    signal(pid as i32, libc::SIGTERM);
    let run = ledger.settled(plan.run_id);
    assert_eq!(run.status, RunStatus::Interrupted, "{run:?}");
    assert_eq!(
        run.reason.as_deref(),
        Some("interrupted: the monitor received SIGTERM")
    );
    assert_eq!(ledger.leftovers(), Vec::<u32>::new());
    assert_eq!(monitor.exit_code(), Some(0));
}

#[test]
fn a_leftover_background_process_is_killed_after_success() {
    let ledger = Ledger::new();
    let plan = ledger.admit(&["sh", "-c", "sleep 300 & exit 0"]);
    let _monitor = ledger.start(&plan);
    let run = ledger.settled(plan.run_id);
    assert_eq!(run.status, RunStatus::Succeeded, "{run:?}");
    assert_eq!(run.exit_code, Some(0));
    assert_eq!(run.reason.as_deref(), Some("killed 1 leftover process"));
    assert_eq!(ledger.leftovers(), Vec::<u32>::new());
}

#[test]
fn a_descendant_that_escaped_the_group_does_not_hold_the_run_open() {
    let ledger = Ledger::new();
    // In a session of its own, with the output pipes: out of the group's reach.
    let plan = ledger.admit(&["sh", "-c", "setsid sleep 300 & echo done"]);
    let mut monitor = ledger.start(&plan);
    let run = ledger.settled(plan.run_id);
    assert_eq!(run.status, RunStatus::Succeeded, "{run:?}");
    assert!(log_of(&run).contains("done\n"));
    assert_eq!(monitor.exit_code(), Some(0));
}

#[test]
fn a_run_cancelled_before_start_runs_nothing() {
    let ledger = Ledger::new();
    let touched = ledger.path().join("touched");
    let plan = ledger.admit(&["touch", touched.to_str().unwrap()]);
    let end = RunEnd::with_reason(RunStatus::Cancelled, "cancelled by test", Timestamp::now());
    assert!(
        ledger
            .store
            .run_settle(plan.run_id, &end, ledger.epoch)
            .unwrap()
    );
    let mut monitor = ledger.start(&plan);
    assert_eq!(monitor.exit_code(), Some(0));
    let run = ledger.run(plan.run_id);
    assert_eq!(run.status, RunStatus::Cancelled);
    assert_eq!(run.reason.as_deref(), Some("cancelled by test"));
    assert_eq!((run.monitor_pid, run.started_at), (None, None));
    assert!(!touched.exists(), "the command ran");
}

#[test]
fn a_missing_program_fails_to_start() {
    let ledger = Ledger::new();
    let plan = ledger.admit(&["/nonexistent/x"]);
    let mut monitor = ledger.start(&plan);
    let run = ledger.settled(plan.run_id);
    assert_eq!(run.status, RunStatus::Failed, "{run:?}");
    let reason = run.reason.clone().unwrap_or_default();
    assert!(
        reason.starts_with("failed to start: /nonexistent/x:"),
        "{reason}"
    );
    assert_eq!((run.exit_code, run.signal), (None, None));
    assert!(log_of(&run).contains(&format!("[stead: {reason}]")));
    assert_eq!(monitor.exit_code(), Some(0));
}

#[test]
fn a_missing_working_directory_fails_to_start() {
    let ledger = Ledger::new();
    let mut plan = ledger.admit(&["true"]);
    plan.cwd = Some(ledger.path().join("nowhere"));
    let _monitor = ledger.start(&plan);
    let run = ledger.settled(plan.run_id);
    assert_eq!(run.status, RunStatus::Failed, "{run:?}");
    let reason = run.reason.unwrap_or_default();
    assert!(
        reason.starts_with("failed to start: working directory"),
        "{reason}"
    );
}

fn argv(args: &[&str]) -> Vec<String> {
    args.iter().map(|a| a.to_string()).collect()
}

/// A command that creates `path`: it ran if the file exists.
fn touch(path: &Path) -> Vec<String> {
    argv(&["touch", path.to_str().unwrap()])
}

#[test]
fn an_alternative_runs_after_the_command_fails() {
    let ledger = Ledger::new();
    let hooked = ledger.path().join("hooked");
    let mut plan = ledger.admit(&["sh", "-c", "echo command=$STEAD_ALTERNATIVE; exit 1"]);
    plan.alternatives = vec![
        argv(&["sh", "-c", "echo alternative=$STEAD_ALTERNATIVE; exit 2"]),
        argv(&["sh", "-c", "echo alternative=$STEAD_ALTERNATIVE"]),
    ];
    plan.on_failure = Some(format!("touch {}", hooked.display()));
    let mut monitor = ledger.start(&plan);
    let run = ledger.settled(plan.run_id);
    assert_eq!(run.status, RunStatus::Succeeded, "{run:?}");
    assert_eq!((run.exit_code, run.signal), (Some(0), None));
    assert_eq!(
        run.reason.as_deref(),
        Some("succeeded with alternative 2 after the command and alternative 1 failed")
    );
    assert_eq!(monitor.exit_code(), Some(0));
    assert_eq!(
        log_of(&run),
        "command=0\n\
         [stead: command failed (exited with code 1); trying alternative 1 of 2: \
         sh -c \"echo alternative=$STEAD_ALTERNATIVE; exit 2\"]\n\
         alternative=1\n\
         [stead: alternative 1 failed (exited with code 2); trying alternative 2 of 2: \
         sh -c \"echo alternative=$STEAD_ALTERNATIVE\"]\n\
         alternative=2\n"
    );
    assert!(!hooked.exists(), "the failure hook ran after a success");
}

#[test]
fn when_every_alternative_fails_the_last_failure_stands() {
    let ledger = Ledger::new();
    // Killed by a signal stead did not send, then failing to start: both are failures.
    let mut plan = ledger.admit(&["sh", "-c", "kill -KILL $$"]);
    plan.alternatives = vec![argv(&["/nonexistent/x"]), argv(&["sh", "-c", "exit 4"])];
    let mut monitor = ledger.start(&plan);
    let run = ledger.settled(plan.run_id);
    assert_eq!(run.status, RunStatus::Failed, "{run:?}");
    assert_eq!((run.exit_code, run.signal), (Some(4), None));
    assert_eq!(
        run.reason.as_deref(),
        Some("exited with code 4; the command and all 2 alternatives failed")
    );
    assert_eq!(monitor.exit_code(), Some(0));
    let log = log_of(&run);
    let notes: Vec<&str> = log.lines().collect();
    assert_eq!(notes.len(), 3, "{log}");
    assert_eq!(
        notes[0],
        "[stead: command failed (killed by signal 9 (SIGKILL)); \
         trying alternative 1 of 2: /nonexistent/x]"
    );
    assert!(
        notes[1].starts_with("[stead: failed to start: /nonexistent/x:"),
        "{log}"
    );
    assert!(
        notes[2].starts_with("[stead: alternative 1 failed (failed to start: /nonexistent/x:")
            && notes[2].ends_with("); trying alternative 2 of 2: sh -c \"exit 4\"]"),
        "{log}"
    );
}

#[test]
fn a_cancel_runs_no_alternative_and_no_hook() {
    let ledger = Ledger::new();
    let (alternative, hooked) = (
        ledger.path().join("alternative"),
        ledger.path().join("hooked"),
    );
    let mut plan = ledger.admit(&["sh", "-c", "sleep 300 & wait"]);
    plan.alternatives = vec![touch(&alternative)];
    plan.on_failure = Some(format!("touch {}", hooked.display()));
    let mut monitor = ledger.start(&plan);
    let pid = ledger.running(plan.run_id);
    wait_until("the sleep runs", || ledger.leftovers().len() == 2);
    signal(pid as i32, libc::SIGUSR1);
    let run = ledger.settled(plan.run_id);
    assert_eq!(run.status, RunStatus::Cancelled, "{run:?}");
    assert_eq!(run.reason.as_deref(), Some("cancelled"));
    assert_eq!(monitor.exit_code(), Some(0));
    assert!(!alternative.exists(), "the alternative ran after a cancel");
    assert!(!hooked.exists(), "the failure hook ran after a cancel");
    assert_eq!(log_of(&run), "");
}

#[test]
fn sigterm_to_the_monitor_runs_no_alternative_and_no_hook() {
    let ledger = Ledger::new();
    let (alternative, hooked) = (
        ledger.path().join("alternative"),
        ledger.path().join("hooked"),
    );
    let mut plan = ledger.admit(&["sh", "-c", "sleep 300 & wait"]);
    plan.alternatives = vec![touch(&alternative)];
    plan.on_failure = Some(format!("touch {}", hooked.display()));
    let mut monitor = ledger.start(&plan);
    let pid = ledger.running(plan.run_id);
    wait_until("the sleep runs", || ledger.leftovers().len() == 2);
    signal(pid as i32, libc::SIGTERM);
    let run = ledger.settled(plan.run_id);
    assert_eq!(run.status, RunStatus::Interrupted, "{run:?}");
    assert_eq!(monitor.exit_code(), Some(0));
    assert!(
        !alternative.exists(),
        "the alternative ran after an interruption"
    );
    assert!(
        !hooked.exists(),
        "the failure hook ran after an interruption"
    );
    assert_eq!(ledger.leftovers(), Vec::<u32>::new());
}

#[test]
fn a_timeout_runs_no_alternative_but_the_hook() {
    let ledger = Ledger::new();
    let (alternative, input) = (
        ledger.path().join("alternative"),
        ledger.path().join("input"),
    );
    let mut plan = ledger.admit(&["sleep", "30"]);
    plan.timeout_ms = Some(300);
    plan.alternatives = vec![touch(&alternative)];
    plan.on_failure = Some(format!("cat > {}", input.display()));
    let mut monitor = ledger.start(&plan);
    let run = ledger.settled(plan.run_id);
    assert_eq!(run.status, RunStatus::Failed, "{run:?}");
    assert_eq!(run.reason.as_deref(), Some("timed out after 300ms"));
    assert_eq!(monitor.exit_code(), Some(0));
    assert!(
        !alternative.exists(),
        "an alternative ran after the timeout"
    );
    // A timeout is the job's own failure, not a cut: the hook runs.
    let hooked: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&input).unwrap()).unwrap();
    assert_eq!(hooked["reason"], "timed out after 300ms");
}

#[test]
fn the_timeout_covers_the_alternatives() {
    let ledger = Ledger::new();
    let second = ledger.path().join("second");
    let mut plan = ledger.admit(&["false"]);
    plan.timeout_ms = Some(300);
    plan.alternatives = vec![argv(&["sleep", "30"]), touch(&second)];
    let _monitor = ledger.start(&plan);
    let run = ledger.settled(plan.run_id);
    assert_eq!(run.status, RunStatus::Failed, "{run:?}");
    assert_eq!(
        run.reason.as_deref(),
        Some("timed out after 300ms during alternative 1")
    );
    assert_eq!(run.signal, Some(libc::SIGTERM));
    assert!(!second.exists(), "an alternative ran after the timeout");
}

#[test]
fn the_failure_hook_reads_the_final_run() {
    let ledger = Ledger::new();
    let input = ledger.path().join("input");
    let mut plan = ledger.admit(&["sh", "-c", "exit 3"]);
    plan.on_failure = Some(format!(
        "cat > {}; echo hook-saw-$STEAD_MONITOR_TEST_MARK; exit 5",
        input.display()
    ));
    let mut monitor = ledger.start(&plan);
    assert_eq!(monitor.exit_code(), Some(0));
    let run = ledger.run(plan.run_id);
    // The hook's failure changes nothing.
    assert_eq!(run.status, RunStatus::Failed, "{run:?}");
    assert_eq!(run.reason.as_deref(), Some("exited with code 3"));
    let hooked: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&input).unwrap()).unwrap();
    assert_eq!(hooked["id"], plan.run_id);
    assert_eq!(hooked["status"], "failed");
    assert_eq!(hooked["exit_code"], 3);
    assert_eq!(hooked["reason"], "exited with code 3");
    assert!(hooked["ended_at"].is_string(), "{hooked}");
    assert_eq!(
        log_of(&run),
        format!(
            "[stead: running the failure hook]\nhook-saw-{}\n\
             [stead: failure hook exited with code 5]\n",
            ledger.marker
        )
    );
}

#[test]
fn the_failure_hook_does_not_run_after_success() {
    let ledger = Ledger::new();
    let hooked = ledger.path().join("hooked");
    let mut plan = ledger.admit(&["true"]);
    plan.on_failure = Some(format!("touch {}", hooked.display()));
    let mut monitor = ledger.start(&plan);
    assert_eq!(monitor.exit_code(), Some(0));
    assert_eq!(ledger.run(plan.run_id).status, RunStatus::Succeeded);
    assert!(!hooked.exists(), "the failure hook ran after a success");
}

#[test]
fn a_stop_while_the_hook_runs_ends_it() {
    let ledger = Ledger::new();
    let started = ledger.path().join("started");
    let mut plan = ledger.admit(&["false"]);
    plan.on_failure = Some(format!("touch {}; sleep 300 & wait", started.display()));
    let mut monitor = ledger.start(&plan);
    let run = ledger.settled(plan.run_id);
    wait_until("the hook runs", || {
        started.exists() && ledger.leftovers().len() == 2
    });
    signal(monitor.pid() as i32, libc::SIGTERM);
    assert_eq!(monitor.exit_code(), Some(0));
    assert_eq!(ledger.leftovers(), Vec::<u32>::new());
    // Recorded before the hook ran, and left alone.
    assert_eq!(ledger.run(plan.run_id), run);
    assert!(
        log_of(&run).ends_with(
            "[stead: failure hook stopped: interrupted: the monitor received SIGTERM]\n"
        ),
        "{}",
        log_of(&run)
    );
}

/// The ledger's secret store, with `secrets` set.
fn secret_store(ledger: &Ledger, secrets: &[(&str, &str)]) -> stead_client::secrets::SecretStore {
    let store = stead_client::secrets::SecretStore::in_dir(ledger.path());
    for (name, value) in secrets {
        store.set(name, value, "2026-12-06T08:00:00Z").unwrap();
    }
    store
}

#[test]
fn a_secret_is_given_to_the_command_and_masked_in_its_log_even_split_across_reads() {
    let ledger = Ledger::new();
    let value = "abcdefgh-SPLIT-ijklmnop";
    secret_store(&ledger, &[("SPLIT_TOKEN", value)]);
    let out = ledger.path().join("out");
    // Half of the value, then (once the monitor has read that half: what came before
    // it is in the log) the other half: the value arrives in two reads.
    let script = r#"printf 'before %s' "${TOK%%-SPLIT-*}"
until grep -q before "$1" 2>/dev/null; do sleep 0.01; done
printf -- '-SPLIT-%s after\n' "${TOK##*-SPLIT-}"
echo "$TOK" >&2
printf %s "$TOK" > "$2""#;
    let mut plan = ledger.admit(&["sh", "-c", script, "sh"]);
    plan.argv.push(plan.log_path.display().to_string());
    plan.argv.push(out.display().to_string());
    plan.secrets = [("TOK".to_string(), "SPLIT_TOKEN".to_string())].into();
    let _monitor = ledger.start(&plan);
    let run = ledger.settled(plan.run_id);
    assert_eq!(run.status, RunStatus::Succeeded, "{run:?}");
    assert_eq!(std::fs::read_to_string(&out).unwrap(), value);
    let log = log_of(&run);
    assert!(!log.contains(value), "{log}");
    assert!(!log.contains("ijklmnop"), "{log}");
    assert!(log.contains("before [secret SPLIT_TOKEN] after\n"), "{log}");
    assert!(log.contains("[secret SPLIT_TOKEN]\n"), "{log}");
}

#[test]
fn a_missing_secret_fails_the_start_naming_it_and_the_host() {
    let ledger = Ledger::new();
    secret_store(&ledger, &[("OTHER", "x")]);
    let ran = ledger.path().join("ran");
    let mut plan = ledger.admit(&["touch", ran.to_str().unwrap()]);
    plan.alternatives = vec![touch(&ran)];
    plan.secrets = [("TOK".to_string(), "ABSENT_TOKEN".to_string())].into();
    let _monitor = ledger.start(&plan);
    let run = ledger.settled(plan.run_id);
    assert_eq!(run.status, RunStatus::Failed, "{run:?}");
    let host = stead_sys::machine::host_name();
    assert_eq!(
        run.reason.as_deref(),
        Some(
            format!(
                "failed to start: secret ABSENT_TOKEN is not set on host {host} (stead secret set ABSENT_TOKEN)"
            )
            .as_str()
        )
    );
    assert_eq!(run.started_at, None, "the command never started");
    assert!(!ran.exists(), "neither the command nor its alternative ran");
}
