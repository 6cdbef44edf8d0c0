//! Typed calls for jobs and runs: one method per protocol method, each a thin wrapper
//! over [`Connection::call`] that fixes the parameter and result types, so callers never
//! spell a method name or build parameters by hand.

use std::time::Duration;

use stead_protocol::{
    ApplyParams, ApplyResult, Empty, Job, JobName, JobSpec, PruneParams, PruneResult, Run,
    RunFilter, RunId, RunLog, RunLogParams, RunNow, RunParams, RunWait, SetEnabled, method,
};

use crate::{ClientError, Connection};

impl Connection {
    /// Adds a job; `conflict` when the name is taken, `invalid_params` when the spec is
    /// not valid (a bad cron field, an unknown zone, a relative `cwd`).
    pub fn job_add(&mut self, spec: &JobSpec) -> Result<Job, ClientError> {
        self.call::<method::JobAdd>(spec)
    }

    /// All jobs.
    pub fn job_list(&mut self) -> Result<Vec<Job>, ClientError> {
        self.call::<method::JobList>(&Empty {})
    }

    /// One job by name; `not_found` when there is none.
    pub fn job_get(&mut self, name: &str) -> Result<Job, ClientError> {
        self.call::<method::JobGet>(&job_name(name))
    }

    /// Removes a job and returns it as it was. Its runs stay in the ledger.
    pub fn job_remove(&mut self, name: &str) -> Result<Job, ClientError> {
        self.call::<method::JobRemove>(&job_name(name))
    }

    /// Enables or disables a job; a disabled job never fires but can be run by hand.
    pub fn job_set_enabled(&mut self, name: &str, enabled: bool) -> Result<Job, ClientError> {
        self.call::<method::JobSetEnabled>(&SetEnabled {
            name: name.to_string(),
            enabled,
        })
    }

    /// Makes the jobs match a declared set (or, with `dry_run`, says what that would do).
    pub fn apply(&mut self, params: ApplyParams) -> Result<ApplyResult, ClientError> {
        self.call::<method::Apply>(&params)
    }

    /// Starts a run of `job` now. The run may come back `skipped` (concurrency `forbid`).
    pub fn run_now(&mut self, job: &str) -> Result<Run, ClientError> {
        self.run_with(job, RunParams::default())
    }

    /// Starts a run of `job` now with its own environment and arguments.
    pub fn run_with(&mut self, job: &str, params: RunParams) -> Result<Run, ClientError> {
        self.call::<method::RunNow>(&RunNow {
            job: job.to_string(),
            env: params.env,
            args: params.args,
        })
    }

    /// Runs matching `filter`, newest first.
    pub fn run_list(&mut self, filter: RunFilter) -> Result<Vec<Run>, ClientError> {
        self.call::<method::RunList>(&filter)
    }

    /// One run by id; `not_found` when there is none.
    pub fn run_get(&mut self, id: i64) -> Result<Run, ClientError> {
        self.call::<method::RunGet>(&RunId { id })
    }

    /// Waits until the run is terminal, or until `timeout` has passed, and returns the
    /// run as it is then. Without a timeout the server decides how long to hold the
    /// call, so a caller that needs a terminal run checks the status and calls again
    /// ([`Connection::wait_ended`] does; [`Connection::wait_final`] waits for the work's
    /// last attempt).
    pub fn run_wait(&mut self, id: i64, timeout: Option<Duration>) -> Result<Run, ClientError> {
        self.call::<method::RunWait>(&RunWait {
            id,
            // Rounded up, so a sub-millisecond timeout still waits rather than polls.
            timeout_ms: timeout
                .map(|t| u64::try_from(t.as_micros().div_ceil(1000)).unwrap_or(u64::MAX)),
        })
    }

    /// Up to `max_bytes` (by default and at most
    /// [`MAX_RUN_LOG_READ`](stead_protocol::limits::MAX_RUN_LOG_READ)) of a run's log from
    /// byte `offset`, as the shared ledger holds it: shipped there by the host that ran
    /// the run. On a ledger of one host, `not_found` (the log is only in its file).
    pub fn run_log(
        &mut self,
        id: i64,
        offset: u64,
        max_bytes: Option<u64>,
    ) -> Result<RunLog, ClientError> {
        self.call::<method::RunLog>(&RunLogParams {
            id,
            offset,
            max_bytes,
        })
    }

    /// Cancels a run. The answer may still be `running`: the run's monitor stops the
    /// command (SIGTERM, then SIGKILL after a grace period) and records the end.
    pub fn run_cancel(&mut self, id: i64) -> Result<Run, ClientError> {
        self.call::<method::RunCancel>(&RunId { id })
    }

    /// Applies the server's retention rules now and answers what went; with `dry_run`,
    /// answers what would go and deletes nothing.
    pub fn prune(&mut self, dry_run: bool) -> Result<PruneResult, ClientError> {
        self.call::<method::Prune>(&PruneParams { dry_run })
    }
}

fn job_name(name: &str) -> JobName {
    JobName {
        name: name.to_string(),
    }
}
