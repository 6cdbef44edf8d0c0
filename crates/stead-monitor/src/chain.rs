//! The run's command and its alternatives: each alternative is tried, in order, only
//! after a genuine failure of the command before it (a non-zero exit, a signal stead did
//! not send, a failure to start). A cancel, a stop of the monitor or the run's timeout
//! ends the chain; the timeout covers the whole of it.
//!
//! Every command runs the same way (its own process group, the same log, a note before
//! each alternative) with `STEAD_ALTERNATIVE` in its environment: 0 for the command, N
//! for alternative N. The run's end is the last command's, its reason telling the story.

use jiff::Timestamp;
use stead_protocol::RunStatus;
use stead_protocol::run_env::{SECRET_VARIABLES_VAR, secret_variables};

use super::log::Log;
use super::process_group;
use super::signals::SignalPipe;
use super::watch::{self, Limits, Ownership, Stop, Watched};
use stead_core::runs::{CommandStart, MonitorPlan, RunEnd};

/// Which of the commands is running: 0 for the command, N for alternative N.
const ALTERNATIVE_VAR: &str = "STEAD_ALTERNATIVE";

/// What each command of the chain is made from: the plan, and the values of its
/// secrets, which the commands get in their environment (and nothing else does), with
/// the names of their variables in `STEAD_SECRET_VARS`.
#[derive(Debug, Clone, Copy)]
pub struct Commands<'a> {
    pub plan: &'a MonitorPlan,
    pub secret_env: &'a [(String, String)],
}

/// How the chain ended.
#[derive(Debug)]
pub struct Chained {
    pub end: RunEnd,
    /// A cancel or stop of the monitor, asked for at any point, even once the last
    /// command had failed by itself: then the failure hook must not run either.
    pub halted: Option<Stop>,
}

/// Runs the plan's command and, after genuine failures, its alternatives. `restarting`
/// names a service of the job being restarted: a failure then is the restart's doing,
/// and the chain stops there (the ledger records the run interrupted). The end says when
/// the command was spawned: the run's start.
pub fn run(
    commands: Commands<'_>,
    signals: &mut SignalPipe,
    log: &mut Log,
    restarting: &dyn Fn() -> Option<String>,
    ownership: Option<Ownership<'_>>,
) -> Chained {
    let plan = commands.plan;
    let limits = Limits::from_now(plan.timeout_ms, plan.kill_grace_ms);
    let (first, started) = attempt(commands, 0, &plan.argv, &limits, signals, log, ownership);
    let mut chained = chain(
        commands, first, &limits, signals, log, restarting, ownership,
    );
    chained.end.started = CommandStart::At(started);
    chained
}

/// [`run`] on from the command's first attempt, `ran`.
fn chain(
    commands: Commands<'_>,
    mut ran: Watched,
    limits: &Limits,
    signals: &mut SignalPipe,
    log: &mut Log,
    restarting: &dyn Fn() -> Option<String>,
    ownership: Option<Ownership<'_>>,
) -> Chained {
    let plan = commands.plan;
    let total = plan.alternatives.len();
    let mut k = 0;
    loop {
        let halted = ran.stop.or(ran.late).filter(|stop| stop.is_cut());
        if ran.stop.is_some() || ran.end.status != RunStatus::Failed || k == total {
            let end = told(ran, k, total);
            return Chained { end, halted };
        }
        // A genuine failure with an alternative left, unless the run was cut meanwhile
        // (or its time is up).
        let pending = || signals.take().into_iter().find_map(Stop::from_signal);
        if let Some(stop) = halted.or_else(pending).or_else(|| limits.expired()) {
            return Chained {
                end: cut_before(stop, &ran.end, k + 1, total),
                halted: Some(stop).filter(|stop| stop.is_cut()),
            };
        }
        if let Some(service) = restarting() {
            log.note(&format!(
                "not trying alternatives: service {service} is being restarted"
            ));
            return Chained {
                end: told(ran, k, total),
                halted: None,
            };
        }
        let failed = if k == 0 {
            "command".to_string()
        } else {
            format!("alternative {k}")
        };
        let argv = &plan.alternatives[k];
        k += 1;
        log.note(&format!(
            "{failed} failed ({}); trying alternative {k} of {total}: {}",
            failure(&ran.end),
            shown(argv)
        ));
        ran = attempt(commands, k, argv, limits, signals, log, ownership).0;
    }
}

/// Starts command `k` and watches it; a failure to start is its end. Answers too when
/// it was spawned (or tried to be), read just before, so that a run's start never comes
/// after its command's own first reading of the clock.
fn attempt(
    commands: Commands<'_>,
    k: usize,
    argv: &[String],
    limits: &Limits,
    signals: &mut SignalPipe,
    log: &mut Log,
    ownership: Option<Ownership<'_>>,
) -> (Watched, Timestamp) {
    let mut at = Timestamp::now();
    let started = process_group::command(commands.plan, argv).and_then(|mut cmd| {
        cmd.env(ALTERNATIVE_VAR, k.to_string());
        cmd.envs(commands.secret_env.iter().map(|(var, value)| (var, value)));
        if !commands.secret_env.is_empty() {
            let vars = commands.secret_env.iter().map(|(var, _)| var.as_str());
            cmd.env(SECRET_VARIABLES_VAR, secret_variables(vars));
        }
        at = Timestamp::now();
        process_group::spawn(&mut cmd)
    });
    let watched = match started {
        Ok(started) => watch::watch(limits, started, signals, log, ownership),
        Err(detail) => Watched {
            end: super::failed_to_start(Some(log), &detail),
            stop: None,
            late: None,
        },
    };
    (watched, at)
}

/// The run's end once command `k` of the chain ended it.
fn told(ran: Watched, k: usize, total: usize) -> RunEnd {
    let mut end = ran.end;
    if k == 0 {
        return end;
    }
    let reason = end.reason.take();
    end.reason = Some(if ran.stop.is_some() {
        format!("{} during alternative {k}", reason.unwrap_or_default())
    } else if end.status == RunStatus::Failed {
        let all = if total == 1 {
            "the command and its alternative failed".to_string()
        } else {
            format!("the command and all {total} alternatives failed")
        };
        format!("{}; {all}", reason.unwrap_or_default())
    } else {
        // A success's only reason is a note on leftovers.
        let success = format!("succeeded with alternative {k} after {} failed", before(k));
        match reason {
            Some(note) => format!("{success}; {note}"),
            None => success,
        }
    });
    end
}

/// The run's end when `stop` came after a genuine failure, before alternative `next`.
fn cut_before(stop: Stop, failed: &RunEnd, next: usize, total: usize) -> RunEnd {
    let last = if next == 1 {
        "the command".to_string()
    } else {
        format!("alternative {}", next - 1)
    };
    let reason = format!(
        "{} after {last} failed ({}), before alternative {next} of {total}",
        stop.reason(),
        failure(failed)
    );
    let end = RunEnd::with_reason(stop.status(), reason, Timestamp::now());
    // As for a single command: a timed-out run keeps how its last command ended; a cut
    // is stead's own doing.
    if stop.is_cut() {
        end
    } else {
        RunEnd {
            exit_code: failed.exit_code,
            signal: failed.signal,
            ..end
        }
    }
}

/// The commands that failed before alternative `k`.
fn before(k: usize) -> String {
    match k {
        1 => "the command".into(),
        2 => "the command and alternative 1".into(),
        _ => format!("the command and alternatives 1 to {}", k - 1),
    }
}

fn failure(end: &RunEnd) -> &str {
    end.reason.as_deref().unwrap_or("failed")
}

/// `argv` on one line, each argument that is not a plain word quoted and escaped.
fn shown(argv: &[String]) -> String {
    let plain = |arg: &str| {
        !arg.is_empty()
            && arg
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"-_./=:,+@%".contains(&b))
    };
    argv.iter()
        .map(|arg| {
            if plain(arg) {
                arg.clone()
            } else {
                format!("{arg:?}")
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A server started by a command leaves out what the monitor adds to it.
    #[test]
    fn the_monitors_own_variables_are_run_variables() {
        use stead_protocol::run_env::RUN_VARIABLES;
        for var in [
            ALTERNATIVE_VAR,
            stead_sys::procs::MARKER_VAR,
            SECRET_VARIABLES_VAR,
        ] {
            assert!(RUN_VARIABLES.contains(&var), "{var}");
        }
    }

    #[test]
    fn arguments_show_on_one_line() {
        let argv = ["sh", "-c", "echo \"hi\"\nexit 1", ""].map(String::from);
        assert_eq!(shown(&argv), r#"sh -c "echo \"hi\"\nexit 1" """#);
    }

    #[test]
    fn the_failures_before_an_alternative_are_counted() {
        assert_eq!(before(1), "the command");
        assert_eq!(before(2), "the command and alternative 1");
        assert_eq!(before(4), "the command and alternatives 1 to 3");
    }
}
