//! The failure hook: the plan's `on_failure` script, run with `sh -c` once a run that
//! genuinely failed (its last command failed, or it timed out) is recorded, with the run
//! as recorded, in JSON, on its stdin.
//!
//! It runs as a command does (a process group of its own, the run's environment but
//! not its secrets, its output in the run's log, the same escalation when stopped) but within
//! [`HOOK_TIMEOUT`], and whatever it does, the run's recorded outcome stands. It never
//! runs after a cancel or a stop of the monitor, and such a stop while it runs ends it.

use std::io::Write;
use std::process::{Command, Stdio};
use std::time::Duration;

use stead_protocol::RunStatus;

use super::chain::Chained;
use super::log::Log;
use super::process_group;
use super::signals::SignalPipe;
use super::watch::{self, Limits, Stop, Watched};
use stead_core::runs::MonitorPlan;
use stead_store::RunRecorder;

/// How long the hook may run before its group is stopped.
const HOOK_TIMEOUT: Duration = Duration::from_secs(60);

/// Whether the run's end calls for the plan's failure hook: it has one, and the run
/// genuinely failed.
pub fn applies(plan: &MonitorPlan, chained: &Chained) -> bool {
    plan.on_failure.is_some() && chained.end.status == RunStatus::Failed
}

/// Runs the plan's failure hook, if it [`applies`]. Call once the run's end is
/// recorded, by this monitor.
pub fn after(
    plan: &MonitorPlan,
    recorder: &dyn RunRecorder,
    chained: &Chained,
    signals: &mut SignalPipe,
    log: &mut Log,
) {
    let Some(script) = plan.on_failure.as_ref().filter(|_| applies(plan, chained)) else {
        return;
    };
    // A cancel or stop that came after the last command failed by itself (or while its
    // end was being recorded) still asks for no more work.
    let pending = || signals.take().into_iter().find_map(Stop::from_signal);
    if let Some(stop) = chained.halted.or_else(pending) {
        log.note(&format!("not running the failure hook: {}", stop.reason()));
        return;
    }
    let input = match super::with_retry(|| recorder.run(plan.run_id)) {
        // The ledger has the last word: a failure during a restart of a service the job
        // depends on was recorded as an interruption, which sends no alarm (and is
        // resumed, not retried).
        Ok(Some(run)) if run.status != RunStatus::Failed => {
            log.note(&format!(
                "not running the failure hook: the run was recorded {}",
                run.status.as_str()
            ));
            return;
        }
        Ok(Some(run)) => match plan.retry_follows() {
            // The ledger wrote the next attempt with the failure: the hook is for the
            // last one.
            Some(retry) => {
                log.note(&format!(
                    "not running the failure hook: retry {} of {} follows",
                    retry.made + 1,
                    retry.made + retry.left
                ));
                return;
            }
            None => serde_json::to_string(&run).map_err(|e| e.to_string()),
        },
        Ok(None) => Err("it is not in the ledger".into()),
        Err(e) => Err(e.to_string()),
    };
    match input {
        Ok(input) => run(plan, script, input, HOOK_TIMEOUT, signals, log),
        Err(e) => log.note(&format!(
            "not running the failure hook: cannot read the run: {e}"
        )),
    }
}

/// Runs `script` with `input` on its stdin, stopping it after `timeout`, and notes how
/// it ended.
fn run(
    plan: &MonitorPlan,
    script: &str,
    input: String,
    timeout: Duration,
    signals: &mut SignalPipe,
    log: &mut Log,
) {
    log.note("running the failure hook");
    let mut cmd = Command::new("sh");
    cmd.arg("-c")
        .arg(script)
        .envs(&plan.env)
        .stdin(Stdio::piped());
    // A missing working directory may be the very failure the hook is to report: the
    // hook then runs where the monitor does.
    if let Some(cwd) = plan.cwd.as_ref().filter(|cwd| cwd.is_dir()) {
        cmd.current_dir(cwd);
    }
    let mut started = match process_group::spawn(&mut cmd) {
        Ok(started) => started,
        Err(detail) => {
            log.note(&format!("failure hook failed to start: {detail}"));
            return;
        }
    };
    if let Some(mut stdin) = started.stdin.take() {
        // From a thread of its own: a hook that does not read its input must not block
        // the monitor, however long the input. Should the thread not start, the pipe
        // closes and the hook reads no input.
        let _ = std::thread::Builder::new()
            .name("hook-stdin".into())
            .spawn(move || {
                let _ = stdin.write_all(input.as_bytes());
            });
    }
    let timeout_ms = u64::try_from(timeout.as_millis()).unwrap_or(u64::MAX);
    let limits = Limits::from_now(Some(timeout_ms), plan.kill_grace_ms);
    // The run is recorded already: its hook answers to nobody but its own limits.
    let ran = watch::watch(&limits, started, signals, log, None);
    log.note(&format!("failure hook {}", outcome(&ran)));
}

fn outcome(ran: &Watched) -> String {
    match (ran.stop, ran.end.exit_code) {
        (Some(stop), _) => format!("stopped: {}", stop.reason()),
        (None, Some(code)) => format!("exited with code {code}"),
        // Killed by a signal: the reason names it.
        (None, None) => ran.end.reason.clone().unwrap_or_default(),
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::time::Instant;

    use rustix::process::Pid;

    use super::*;

    /// Set in the test process that runs [`hanging_hook`].
    const OWN_PROCESS: &str = "STEAD_HOOK_TEST_OWN_PROCESS";
    const HANGING_HOOK: &str = "hook::tests::hanging_hook";

    #[test]
    fn a_hanging_hook_is_stopped_at_its_timeout() {
        // The hook handles the process's signals and reaps all its children, those of
        // the tests running alongside included: it gets a test process of its own.
        let out = Command::new(std::env::current_exe().unwrap())
            .args(["--exact", HANGING_HOOK, "--ignored", "--test-threads=1"])
            .env(OWN_PROCESS, "1")
            .output()
            .unwrap();
        let said = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{said}");
        assert!(said.contains("1 passed"), "{said}");
    }

    #[test]
    #[ignore = "run in a process of its own by a_hanging_hook_is_stopped_at_its_timeout"]
    fn hanging_hook() {
        if std::env::var_os(OWN_PROCESS).is_none() {
            return;
        }
        let tmp = tempfile::tempdir().unwrap();
        let log_path = tmp.path().join("log");
        let (group_file, input_file) = (tmp.path().join("group"), tmp.path().join("input"));
        let plan = MonitorPlan {
            run_id: 1,
            ledger: stead_core::locator::LedgerRef::Sqlite {
                path: tmp.path().join("stead.db"),
            },
            argv: vec!["false".into()],
            cwd: None,
            env: BTreeMap::new(),
            secrets: BTreeMap::new(),
            timeout_ms: None,
            kill_grace_ms: 200,
            log_path: log_path.clone(),
            log_max_bytes: 1024 * 1024,
            alternatives: Vec::new(),
            on_failure: None,
            resume_anywhere: false,
            retry: None,
            not_before: None,
            conditions: Default::default(),
        };
        // Deaf to SIGTERM, so that only the SIGKILL after the grace ends it.
        let script = format!(
            "echo $$ > {}; cat > {}; echo hook-out; trap '' TERM; sleep 30 & wait",
            group_file.display(),
            input_file.display()
        );
        let mut log = Log::open(
            &log_path,
            plan.log_max_bytes,
            stead_protocol::KeepFree::Bytes(0),
        )
        .unwrap();
        let mut signals = SignalPipe::install().unwrap();
        let began = Instant::now();
        let timeout = Duration::from_millis(300);
        run(
            &plan,
            &script,
            "{\"id\":1}".into(),
            timeout,
            &mut signals,
            &mut log,
        );
        assert!(
            began.elapsed() < Duration::from_secs(10),
            "{:?}",
            began.elapsed()
        );
        let text = std::fs::read_to_string(&log_path).unwrap();
        assert_eq!(
            text,
            "[stead: running the failure hook]\nhook-out\n\
             [stead: failure hook stopped: timed out after 300ms]\n"
        );
        assert_eq!(std::fs::read_to_string(&input_file).unwrap(), "{\"id\":1}");
        let group = std::fs::read_to_string(&group_file).unwrap();
        let group = Pid::from_raw(group.trim().parse().unwrap()).unwrap();
        // Not through `live_members`, which walks down from a subreaper this test is not:
        // no process of the group is left at all (its last zombies reaped by whoever
        // inherited them).
        let deadline = Instant::now() + Duration::from_secs(10);
        while rustix::process::test_kill_process_group(group).is_ok() {
            assert!(Instant::now() < deadline, "the hook's group outlived it");
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}
