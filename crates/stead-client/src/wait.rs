//! Waiting for a run's final attempt.
//!
//! A run is not always the last word on its work: a genuine failure with retries left is
//! followed by its retry (after the retry's delay), and a run cut short (a reboot, a dead
//! monitor, a restart that cut it) by its resume. Each is a new run, named by the last
//! one's `followed_by`; the final attempt is the last of that chain, and how it ended is
//! how the work ended. A cut run's debt is settled by the server after its resume delay
//! (resumed, proven landed by a receipt, or not resumed), so the wait looks at it again
//! until that is known.
//!
//! Runs outlive servers (each has its own monitor, and a restart leaves runs to the next
//! server), so a wait reconnects when its server goes away, as its caller says how
//! ([`Follow::reconnect`]).

use std::time::{Duration, Instant};

use stead_protocol::{ErrorCode, Run, RunStatus, exit};

use crate::{ClientError, Connection};

/// How often a cut run is looked at again until its debt is settled.
const SETTLE_INTERVAL: Duration = Duration::from_millis(200);

/// How a run ended: the statuses a run never leaves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ending {
    /// The command (or one of its alternatives) exited 0, or a receipt proved a cut
    /// run's work landed.
    Succeeded,
    /// The command and every alternative failed, or its timeout passed.
    Failed,
    /// Cancelled (`stead cancel`, the API, a `replace` concurrency policy).
    Cancelled,
    /// Cut short and not resumed (too old, its job gone or opted out, another machine's).
    Interrupted,
    /// Never run: an overlap its concurrency policy skipped, a paused job.
    Skipped,
}

impl Ending {
    /// How a run in `status` ended, or `None` while it is queued or running.
    pub fn of(status: RunStatus) -> Option<Ending> {
        match status {
            RunStatus::Queued | RunStatus::Running => None,
            RunStatus::Succeeded => Some(Ending::Succeeded),
            RunStatus::Failed => Some(Ending::Failed),
            RunStatus::Cancelled => Some(Ending::Cancelled),
            RunStatus::Interrupted => Some(Ending::Interrupted),
            RunStatus::Skipped => Some(Ending::Skipped),
        }
    }
}

/// A run's final attempt: nothing carries it on, and nothing will.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FinalAttempt {
    /// How it ended.
    pub ending: Ending,
    /// The attempt itself (its id, exit code or signal, reason), which may be a retry
    /// or a resume of the run waited for.
    pub run: Run,
}

impl FinalAttempt {
    /// The exit status a shell would report for the attempt's command, between 0 and
    /// 255: 0 only for a success; else its own exit code, 128+N when signal N killed
    /// it, and 1 for any other end (cancelled before it started, interrupted, skipped,
    /// failed to start). `stead run --wait` exits with it.
    pub fn exit_code(&self) -> i32 {
        if self.ending == Ending::Succeeded {
            return exit::SUCCESS;
        }
        match (self.run.exit_code, self.run.signal) {
            // An exit code of 0 on a run that did not succeed (a cancelled command that
            // exited cleanly on SIGTERM) must not read as success.
            (Some(code), _) if (1..=255).contains(&code) => code,
            (_, Some(signal)) if (1..=127).contains(&signal) => 128 + signal,
            _ => exit::FAILURE,
        }
    }
}

/// What a wait with a deadline found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Waited {
    /// The final attempt ended before the deadline.
    Final(FinalAttempt),
    /// The deadline passed first: the attempt as it was then, still queued or running,
    /// cut with its debt not yet settled, or ended with another run carrying it on.
    Pending(Run),
}

impl Waited {
    /// The run the wait ended with, final or not.
    pub fn into_run(self) -> Run {
        match self {
            Waited::Final(last) => last.run,
            Waited::Pending(run) => run,
        }
    }
}

/// What a caller of [`Connection::wait_final`] does along the way. A closure that
/// reconnects is one (`|| client.connect_or_start(&stead)`); a caller that wants to
/// hear of each attempt, or to do more while one runs, implements it.
pub trait Follow {
    /// The error of the caller's own steps; a client error converts into it.
    type Error: From<ClientError>;

    /// A connection to a serving server, made when the one in use went away.
    fn reconnect(&mut self) -> Result<Connection, ClientError>;

    /// Waits until `run` (one attempt) has ended, or until `deadline` passes, and
    /// answers it as it is then. By default the server is asked
    /// ([`Connection::wait_ended`]); a caller may do more meanwhile, such as print the
    /// attempt's output as it is written.
    fn wait_attempt(
        &mut self,
        conn: &mut Connection,
        run: Run,
        deadline: Option<Instant>,
    ) -> Result<Run, Self::Error> {
        Ok(conn.wait_ended(run, deadline, || self.reconnect())?)
    }

    /// Told that `ended` is carried on by `next` (its retry or resume) before `next` is
    /// waited for.
    fn carried_on(&mut self, ended: &Run, next: &Run) -> Result<(), Self::Error> {
        let _ = (ended, next);
        Ok(())
    }
}

impl<R: FnMut() -> Result<Connection, ClientError>> Follow for R {
    type Error = ClientError;

    fn reconnect(&mut self) -> Result<Connection, ClientError> {
        self()
    }
}

impl Connection {
    /// Waits for `run`'s final attempt, following it through its retries and resumes,
    /// and answers that attempt and how it ended. `follow` reconnects when the server
    /// goes away meanwhile (runs outlive servers, and the next one carries on), and may
    /// hear of each attempt. A run chained `after` this one is not waited for: it is
    /// other work.
    ///
    /// ```no_run
    /// use stead_client::{Client, installed_stead};
    ///
    /// let client = Client::for_state_dir(None)?;
    /// let stead = installed_stead()?;
    /// let mut conn = client.connect_or_start(&stead)?;
    /// let run = conn.run_now("backup")?;
    /// let last = conn.wait_final(run, || client.connect_or_start(&stead))?;
    /// std::process::exit(last.exit_code());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn wait_final<F: Follow>(
        &mut self,
        run: Run,
        mut follow: F,
    ) -> Result<FinalAttempt, F::Error> {
        match self.follow_chain(run, None, &mut follow)? {
            Waited::Final(last) => Ok(last),
            // Only a deadline leaves a wait pending.
            Waited::Pending(run) => unreachable!("run {} pending without a deadline", run.id),
        }
    }

    /// [`Connection::wait_final`] for at most until `deadline`: when it passes first, the
    /// attempt as it is then ([`Waited::Pending`]).
    pub fn wait_final_until<F: Follow>(
        &mut self,
        run: Run,
        deadline: Instant,
        mut follow: F,
    ) -> Result<Waited, F::Error> {
        self.follow_chain(run, Some(deadline), &mut follow)
    }

    /// Waits until `run` has ended (the server bounds how long it holds one
    /// [`Connection::run_wait`], so it is asked again), or until `deadline` passes, and
    /// answers the run as it is then. This attempt only: see [`Connection::wait_final`]
    /// for the work's end. `reconnect` is used when the server goes away meanwhile.
    pub fn wait_ended(
        &mut self,
        mut run: Run,
        deadline: Option<Instant>,
        mut reconnect: impl FnMut() -> Result<Connection, ClientError>,
    ) -> Result<Run, ClientError> {
        while !run.status.is_terminal() {
            let left = deadline.map(|d| d.saturating_duration_since(Instant::now()));
            if left.is_some_and(|left| left.is_zero()) {
                break;
            }
            let id = run.id;
            run = self.again(&mut reconnect, |conn| conn.run_wait(id, left))?;
        }
        Ok(run)
    }

    fn follow_chain<F: Follow>(
        &mut self,
        mut run: Run,
        deadline: Option<Instant>,
        follow: &mut F,
    ) -> Result<Waited, F::Error> {
        loop {
            run = follow.wait_attempt(self, run, deadline)?;
            // After the settling: a receipt closes a cut run as succeeded.
            run = self.settled(run, deadline, || follow.reconnect())?;
            let Some(ending) = Ending::of(run.status) else {
                return Ok(Waited::Pending(run));
            };
            let passed = deadline.is_some_and(|d| Instant::now() >= d);
            match run.followed_by {
                None if owed(&run) => return Ok(Waited::Pending(run)),
                None => return Ok(Waited::Final(FinalAttempt { ending, run })),
                Some(_) if passed => return Ok(Waited::Pending(run)),
                Some(next) => {
                    let next = self.run_get(next)?;
                    follow.carried_on(&run, &next)?;
                    run = next;
                }
            }
        }
    }

    /// An ended run once it is known whether another carries it on (`followed_by`): at
    /// once for a failure (its retry is written with it), after the resume delay for a
    /// cut run; or as it is when `deadline` passes.
    fn settled(
        &mut self,
        mut run: Run,
        deadline: Option<Instant>,
        mut reconnect: impl FnMut() -> Result<Connection, ClientError>,
    ) -> Result<Run, ClientError> {
        while owed(&run) && deadline.is_none_or(|d| Instant::now() < d) {
            std::thread::sleep(SETTLE_INTERVAL);
            let id = run.id;
            run = self.again(&mut reconnect, |conn| conn.run_get(id))?;
        }
        Ok(run)
    }

    /// `call` on this connection, and once more on a new one (from `reconnect`) when the
    /// server went away meanwhile (a restart, or a server stopping).
    pub fn again<T>(
        &mut self,
        reconnect: &mut impl FnMut() -> Result<Connection, ClientError>,
        mut call: impl FnMut(&mut Connection) -> Result<T, ClientError>,
    ) -> Result<T, ClientError> {
        match call(self) {
            Err(e) if gone(&e) => {
                *self = reconnect()?;
                call(self)
            }
            other => other,
        }
    }
}

/// Whether `run` was cut and its debt is not settled yet: resumed, landed, or not resumed.
fn owed(run: &Run) -> bool {
    run.status == RunStatus::Interrupted && run.resolution.is_none() && run.followed_by.is_none()
}

/// Whether `e` says the server went away, rather than refused the call.
fn gone(e: &ClientError) -> bool {
    match e {
        ClientError::Io(_) => true,
        ClientError::Server(body) => body.code == ErrorCode::ShuttingDown,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An ended run as the server sends it (the fields a run may lack left out).
    fn attempt(status: RunStatus, exit_code: Option<i32>, signal: Option<i32>) -> FinalAttempt {
        let run: Run = serde_json::from_value(serde_json::json!({
            "id": 1,
            "job": "backup",
            "trigger": "on_demand",
            "status": status,
            "exit_code": exit_code,
            "signal": signal,
            "attempt": 1,
            "idempotency_key": "backup#1",
            "machine_id": "m-1",
            "boot_id": "b-1",
            "created_at": "2026-11-30T09:00:00.010Z",
            "log_path": "/state/logs/runs/1.log",
        }))
        .expect("a run");
        FinalAttempt {
            ending: Ending::of(status).expect("an ended status"),
            run,
        }
    }

    #[test]
    fn the_exit_code_is_the_commands_own() {
        let code = |status, exit_code, signal| attempt(status, exit_code, signal).exit_code();
        assert_eq!(code(RunStatus::Succeeded, Some(0), None), 0);
        assert_eq!(code(RunStatus::Failed, Some(3), None), 3);
        assert_eq!(code(RunStatus::Failed, Some(255), None), 255);
        assert_eq!(code(RunStatus::Failed, None, Some(9)), 137);
        assert_eq!(code(RunStatus::Cancelled, None, Some(15)), 143);
    }

    #[test]
    fn any_other_end_that_is_not_a_success_is_1() {
        let code = |status, exit_code, signal| attempt(status, exit_code, signal).exit_code();
        assert_eq!(code(RunStatus::Cancelled, None, None), 1);
        // A cancelled command that exited 0 on SIGTERM did not succeed.
        assert_eq!(code(RunStatus::Cancelled, Some(0), None), 1);
        assert_eq!(code(RunStatus::Interrupted, None, None), 1);
        assert_eq!(code(RunStatus::Skipped, None, None), 1);
        assert_eq!(code(RunStatus::Failed, None, None), 1);
        assert_eq!(code(RunStatus::Failed, Some(-1), None), 1);
    }

    #[test]
    fn only_ended_statuses_have_an_ending() {
        for status in RunStatus::ALL {
            assert_eq!(
                Ending::of(status).is_some(),
                status.is_terminal(),
                "{status:?}"
            );
        }
    }

    #[test]
    fn a_cut_run_is_owed_until_its_debt_is_settled() {
        let mut cut = attempt(RunStatus::Interrupted, None, None).run;
        assert!(owed(&cut));
        cut.resolution = Some("not resumed: its job is gone".into());
        assert!(!owed(&cut));
        cut.resolution = None;
        cut.followed_by = Some(2);
        assert!(!owed(&cut));
        assert!(!owed(&attempt(RunStatus::Failed, Some(1), None).run));
    }
}
