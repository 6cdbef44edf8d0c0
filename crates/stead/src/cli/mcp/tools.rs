//! The tools: one per thing an agent does with stead, each answering the JSON the
//! matching command prints with `--json` (`job_list` as `stead job ls --json`, `gate` as
//! `stead gate --json`, ...).
//!
//! Each call runs on a blocking thread (the client library is synchronous) and connects
//! afresh, so a call after `restart` reaches the new server; `gate` and `restart`
//! connect as their commands do (a gate never starts a server). Waits are bounded: a tool
//! that waits (`run_now` with `wait`, `run_wait`, `gate`, `restart`) takes a `timeout`
//! of at most [`MAX_WAIT`] and answers what it found then rather than blocking for ever.
//! An error is a tool error (`isError`) with the command's message; nothing was changed.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolResult, ContentBlock, ProgressNotificationParam};
use rmcp::service::RequestContext;
use rmcp::{RoleServer, tool, tool_router};
use schemars::JsonSchema;
use serde::Deserialize;
use serde::Serialize;
use serde_json::Value;
use stead_client::{Client, Connection};
use stead_core::schedule;
use stead_protocol::{
    ApplyParams, HoldSpec, JobSpec, Run, RunFilter, RunParams, RunStatus, STEAD_SERVICE,
    SleepFilter, method,
};

use super::Stead;
use crate::cli::errors::DataError;
use crate::cli::gate::{self, GateArgs};
use crate::cli::output::OutputArgs;
use crate::cli::restart;

/// The longest any tool waits, whatever `timeout` it is given: an agent's call should
/// come back while the agent still listens.
pub const MAX_WAIT: Duration = Duration::from_secs(600);

/// The wait of a tool that waits when no `timeout` is given.
const DEFAULT_WAIT: &str = "60s";

/// How often a waiting tool tells a client that asked for progress that it still waits.
const PROGRESS_EVERY: Duration = Duration::from_secs(1);

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct JobNameArgs {
    /// The job's name
    pub name: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct JobPutArgs {
    /// The job: the fields of one `[[job]]` table of an apply file (resource
    /// stead://docs/job-fields). A job of that name is changed to match; otherwise it is
    /// created.
    pub job: JobSpec,
    /// Say what would change, change nothing
    #[serde(default)]
    pub dry_run: bool,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct JobEnableArgs {
    /// The job's name
    pub name: String,
    /// true: the job fires on its schedule; false: it never fires (it can still be run
    /// with run_now)
    pub enabled: bool,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RunNowArgs {
    /// The job's name
    pub job: String,
    /// Environment variables for this run only
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// Arguments appended to the command for this run only (a shell job's `$@`)
    #[serde(default)]
    pub args: Vec<String>,
    /// Wait for the run to end, through its retries and a resume, and answer the last
    /// attempt
    #[serde(default)]
    pub wait: bool,
    /// With `wait`: how long to wait (a duration such as "90s"; default 60s, at most
    /// 10m). Past it the run is answered as it is, still queued or running.
    pub timeout: Option<String>,
}

#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RunsListArgs {
    /// Only runs of this job
    pub job: Option<String>,
    /// Only runs with this status
    pub status: Option<RunStatus>,
    /// At most this many runs (default 50, at most 10,000)
    pub limit: Option<u32>,
    /// Only runs with an id below this (for paging back)
    pub before_id: Option<i64>,
    /// Leave out skipped rows (fires not run, overlaps)
    #[serde(default)]
    pub no_skipped: bool,
}

#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SleepListArgs {
    /// At most this many sleeps (default 50, at most 10,000)
    pub limit: Option<u32>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RunIdArgs {
    /// The run's id (from runs_list or run_now)
    pub id: i64,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RunWaitArgs {
    /// The run's id
    pub id: i64,
    /// How long to wait (default 60s, at most 10m); past it the run is answered as it is
    pub timeout: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RunLogArgs {
    /// The run's id
    pub id: i64,
    /// The byte of the log to start at (the previous answer's `next_offset` to read on)
    #[serde(default)]
    pub offset: u64,
    /// At most this many bytes (default 64 KiB, at most 256 KiB)
    pub max_bytes: Option<u64>,
}

#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReadinessArgs {
    /// The service a restart of which is considered (default: stead itself)
    pub service: Option<String>,
    /// How far ahead a due fire counts (default 90s)
    pub window: Option<String>,
}

#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GateToolArgs {
    /// The service about to be restarted (default: stead itself)
    pub service: Option<String>,
    /// How long to wait for nothing to be in the way (default 60s, at most 10m); past
    /// it the answer is `deferred`: restart nothing
    pub timeout: Option<String>,
    /// How far ahead a due fire counts (default 90s)
    pub window: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HoldAcquireArgs {
    /// The hold's name, one per piece of work (acquiring a held name renews it)
    pub name: String,
    /// The service held (default: stead itself)
    pub service: Option<String>,
    /// How long the hold lasts unless renewed, such as "10m"; past it, it blocks nothing
    pub ttl: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HoldNameArgs {
    /// The hold's name
    pub name: String,
}

#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RestartArgs {
    /// The service to restart (default: stead itself); a declared service needs a
    /// restart command
    pub service: Option<String>,
    /// How long the gate, and then the ready check, may wait (default 60s, at most 10m);
    /// a gate still blocked then answers `restarted: false` and restarts nothing
    pub timeout: Option<String>,
    /// Restart without waiting for the gate: dependent runs in flight are cut
    /// (interrupted, resumed once the service is ready)
    #[serde(default)]
    pub force: bool,
}

#[tool_router(vis = "pub(super)")]
impl Stead {
    /// The server serving the state directory: its id, pid, version, ledger and counts of
    /// jobs and runs (as `stead status --json`)
    #[tool(annotations(
        title = "Server status",
        read_only_hint = true,
        open_world_hint = false
    ))]
    async fn status(&self) -> CallToolResult {
        self.calling("status", |conn| Ok(conn.status()?)).await
    }

    /// Every job with its spec, next fire and latest run (as `stead job ls --json`)
    #[tool(annotations(title = "List jobs", read_only_hint = true, open_world_hint = false))]
    async fn job_list(&self) -> CallToolResult {
        self.calling("jobs", |conn| Ok(conn.job_list()?)).await
    }

    /// One job by name (as `stead job show NAME --json`)
    #[tool(annotations(title = "Show a job", read_only_hint = true, open_world_hint = false))]
    async fn job_show(&self, Parameters(a): Parameters<JobNameArgs>) -> CallToolResult {
        self.calling("job", move |conn| Ok(conn.job_get(&a.name)?))
            .await
    }

    /// Add a job, or change the job of that name to match: the fields of a `[[job]]`
    /// table of an apply file, validated exactly as `stead apply` validates them.
    /// Answers what changed (as `stead apply --json`); with dry_run, what would.
    #[tool(annotations(
        title = "Add or update a job",
        read_only_hint = false,
        destructive_hint = false,
        idempotent_hint = true,
        open_world_hint = false
    ))]
    async fn job_put(&self, Parameters(a): Parameters<JobPutArgs>) -> CallToolResult {
        self.calling("apply", move |conn| {
            Ok(conn.apply(ApplyParams {
                jobs: vec![a.job],
                services: Vec::new(),
                queues: Vec::new(),
                notifiers: Vec::new(),
                prune: false,
                dry_run: a.dry_run,
            })?)
        })
        .await
    }

    /// Remove a job; its runs stay in the ledger. Answers the job as it was.
    #[tool(annotations(
        title = "Remove a job",
        read_only_hint = false,
        destructive_hint = true,
        idempotent_hint = false,
        open_world_hint = false
    ))]
    async fn job_remove(&self, Parameters(a): Parameters<JobNameArgs>) -> CallToolResult {
        self.calling("job", move |conn| Ok(conn.job_remove(&a.name)?))
            .await
    }

    /// Enable or disable a job: a disabled job keeps its definition but never fires
    #[tool(annotations(
        title = "Enable or disable a job",
        read_only_hint = false,
        destructive_hint = false,
        idempotent_hint = true,
        open_world_hint = false
    ))]
    async fn job_enable(&self, Parameters(a): Parameters<JobEnableArgs>) -> CallToolResult {
        self.calling("job", move |conn| {
            Ok(conn.job_set_enabled(&a.name, a.enabled)?)
        })
        .await
    }

    /// Start a run of a job now, with its own environment and arguments if given. With
    /// wait, answers the run once it has ended (following its retries and a resume, as
    /// `stead run --wait --json`), or as it is when the timeout passes.
    #[tool(annotations(
        title = "Run a job now",
        read_only_hint = false,
        destructive_hint = false,
        idempotent_hint = false,
        open_world_hint = true
    ))]
    async fn run_now(
        &self,
        Parameters(a): Parameters<RunNowArgs>,
        context: RequestContext<RoleServer>,
    ) -> CallToolResult {
        self.waiting(&context, "run", move |client| {
            let conn = &mut crate::cli::connect(client)?;
            // Checked before the run starts: a bad timeout must not leave a run behind.
            let deadline = a
                .wait
                .then(|| wait_limit(a.timeout.as_deref()))
                .transpose()?;
            let run = conn.run_with(
                &a.job,
                RunParams {
                    env: a.env,
                    args: a.args,
                },
            )?;
            match deadline {
                Some(limit) => last_attempt(client, conn, run, Instant::now() + limit),
                None => Ok(run),
            }
        })
        .await
    }

    /// Runs, newest first, filtered by job and status (as `stead runs --json`)
    #[tool(annotations(title = "List runs", read_only_hint = true, open_world_hint = false))]
    async fn runs_list(&self, Parameters(a): Parameters<RunsListArgs>) -> CallToolResult {
        self.calling("runs", move |conn| {
            Ok(conn.run_list(RunFilter {
                job: a.job,
                status: a.status,
                limit: a.limit,
                before_id: a.before_id,
                no_skipped: a.no_skipped,
            })?)
        })
        .await
    }

    /// The sleeps the machine woke from, newest first: when, how long, on which host
    /// (as `stead sleeps --json`); a run's `slept_ms` is how long it slept of them
    #[tool(annotations(title = "List sleeps", read_only_hint = true, open_world_hint = false))]
    async fn sleep_list(&self, Parameters(a): Parameters<SleepListArgs>) -> CallToolResult {
        self.calling("sleeps", move |conn| {
            Ok(conn.call::<method::SleepList>(&SleepFilter { limit: a.limit })?)
        })
        .await
    }

    /// One run: its status, times, exit, trigger, reason and what carries it on, and
    /// its idempotency key's completed steps and checkpoint keys (as `stead show ID
    /// --json`)
    #[tool(annotations(title = "Show a run", read_only_hint = true, open_world_hint = false))]
    async fn run_show(&self, Parameters(a): Parameters<RunIdArgs>) -> CallToolResult {
        self.calling("run", move |conn| Ok(crate::cli::show::shown(conn, a.id)?))
            .await
    }

    /// The checkpoints (keys and values) and completed steps a run's idempotency key
    /// holds: what its resume or retry continues from (as `stead checkpoint ls --run ID
    /// --json`)
    #[tool(annotations(
        title = "A run's checkpoints",
        read_only_hint = true,
        open_world_hint = false
    ))]
    async fn checkpoints(&self, Parameters(a): Parameters<RunIdArgs>) -> CallToolResult {
        self.calling("checkpoints", move |conn| Ok(conn.checkpoint_list(a.id)?))
            .await
    }

    /// Wait for a run to end, through its retries and a resume, and answer the last
    /// attempt; or the run as it is when the timeout passes
    #[tool(annotations(
        title = "Wait for a run",
        read_only_hint = true,
        open_world_hint = false
    ))]
    async fn run_wait(
        &self,
        Parameters(a): Parameters<RunWaitArgs>,
        context: RequestContext<RoleServer>,
    ) -> CallToolResult {
        self.waiting(&context, "run", move |client| {
            let conn = &mut crate::cli::connect(client)?;
            let limit = wait_limit(a.timeout.as_deref())?;
            let run = conn.run_get(a.id)?;
            last_attempt(client, conn, run, Instant::now() + limit)
        })
        .await
    }

    /// A stretch of a run's output, from byte `offset`, at most `max_bytes` (as text;
    /// bytes that are not UTF-8 are replaced). `next_offset` reads on; `complete` says
    /// the run has ended and nothing more will come.
    #[tool(annotations(
        title = "Read a run's log",
        read_only_hint = true,
        open_world_hint = false
    ))]
    async fn run_log(&self, Parameters(a): Parameters<RunLogArgs>) -> CallToolResult {
        self.calling("log", move |conn| {
            super::log::read(conn, a.id, a.offset, a.max_bytes)
        })
        .await
    }

    /// Cancel a queued or running run: its command is stopped (SIGTERM, then SIGKILL
    /// after a grace period). Answers the run; it may still say running for a moment.
    #[tool(annotations(
        title = "Cancel a run",
        read_only_hint = false,
        destructive_hint = true,
        idempotent_hint = true,
        open_world_hint = false
    ))]
    async fn run_cancel(&self, Parameters(a): Parameters<RunIdArgs>) -> CallToolResult {
        self.calling("run", move |conn| Ok(conn.run_cancel(a.id)?))
            .await
    }

    /// The services declared (`stead service ls --json`): what a restart of each runs and
    /// how its readiness is checked
    #[tool(annotations(
        title = "List services",
        read_only_hint = true,
        open_world_hint = false
    ))]
    async fn service_list(&self) -> CallToolResult {
        self.calling("services", |conn| Ok(conn.service_list()?))
            .await
    }

    /// What a restart of a service (default: stead itself) would cut now: runs in
    /// flight, fires due within the window, live holds (as `stead readiness --json`)
    #[tool(annotations(
        title = "Readiness of a service",
        read_only_hint = true,
        open_world_hint = false
    ))]
    async fn readiness(&self, Parameters(a): Parameters<ReadinessArgs>) -> CallToolResult {
        self.calling("readiness", move |conn| {
            Ok(conn.readiness(
                a.service.as_deref(),
                Some(a.window.as_deref().unwrap_or("90s")),
            )?)
        })
        .await
    }

    /// The gate: wait until a restart of a service (default: stead itself) would cut
    /// nothing. Answers `clear` (restart now), `server_down` (nothing to cut) or, when
    /// the timeout passes first, `deferred`: restart nothing, try later. Restarts nothing
    /// itself (as `stead gate --json`).
    #[tool(annotations(
        title = "Gate a restart",
        read_only_hint = true,
        open_world_hint = false
    ))]
    async fn gate(
        &self,
        Parameters(a): Parameters<GateToolArgs>,
        context: RequestContext<RoleServer>,
    ) -> CallToolResult {
        self.waiting(&context, "gate", move |client| {
            let args = GateArgs {
                service: a.service,
                timeout: bounded(a.timeout.as_deref())?,
                interval: "15s".into(),
                window: a.window.unwrap_or_else(|| "90s".into()),
                force: false,
                format: OutputArgs { json: true },
            };
            gate::wait(client, &args)
        })
        .await
    }

    /// Hold a service while mid-work on it, so a restart of it waits (the gate answers
    /// deferred) until the hold is released or its ttl passes (as `stead hold acquire
    /// --json`)
    #[tool(annotations(
        title = "Hold a service",
        read_only_hint = false,
        destructive_hint = false,
        idempotent_hint = true,
        open_world_hint = false
    ))]
    async fn hold_acquire(&self, Parameters(a): Parameters<HoldAcquireArgs>) -> CallToolResult {
        self.calling("hold", move |conn| {
            Ok(conn.hold_acquire(&HoldSpec {
                name: a.name,
                service: a.service.unwrap_or_else(|| STEAD_SERVICE.into()),
                ttl: a.ttl,
            })?)
        })
        .await
    }

    /// Release a hold (as `stead hold release NAME --json`)
    #[tool(annotations(
        title = "Release a hold",
        read_only_hint = false,
        destructive_hint = false,
        idempotent_hint = false,
        open_world_hint = false
    ))]
    async fn hold_release(&self, Parameters(a): Parameters<HoldNameArgs>) -> CallToolResult {
        self.calling("hold", move |conn| Ok(conn.hold_release(&a.name)?))
            .await
    }

    /// The holds, live and wedged (past their ttl, blocking nothing)
    #[tool(annotations(title = "List holds", read_only_hint = true, open_world_hint = false))]
    async fn hold_list(&self) -> CallToolResult {
        self.calling("holds", |conn| Ok(conn.hold_list()?)).await
    }

    /// Restart a service (default: stead itself) through the gate: wait until nothing
    /// would be cut, restart, then prove it is back (a new server, or the service's
    /// ready check). When the gate is still blocked at the timeout, nothing is restarted
    /// and the answer says `restarted: false` (as `stead restart --json`).
    #[tool(annotations(
        title = "Restart a service through the gate",
        read_only_hint = false,
        destructive_hint = true,
        idempotent_hint = false,
        open_world_hint = true
    ))]
    async fn restart(
        &self,
        Parameters(a): Parameters<RestartArgs>,
        context: RequestContext<RoleServer>,
    ) -> CallToolResult {
        self.waiting(&context, "restart", move |client| {
            let args = restart::Args {
                service: a.service,
                force: a.force,
                timeout: bounded(a.timeout.as_deref())?,
                format: OutputArgs { json: true },
            };
            Ok(restart::perform(client, &args)?.0)
        })
        .await
    }
}

impl Stead {
    /// Runs `work` on a blocking thread with the state directory's client, and answers
    /// its value as the tool's result: pretty JSON as text, and as structured content
    /// (under `key` when it is not an object, since structured content is an object).
    async fn blocking<T, F>(&self, key: &'static str, work: F) -> CallToolResult
    where
        T: Serialize + Send + 'static,
        F: FnOnce(&Client) -> anyhow::Result<T> + Send + 'static,
    {
        let client = self.client.clone();
        match tokio::task::spawn_blocking(move || work(&client)).await {
            Ok(Ok(value)) => answer(key, &value),
            Ok(Err(e)) => CallToolResult::error(vec![ContentBlock::text(format!("{e:#}"))]),
            Err(e) => CallToolResult::error(vec![ContentBlock::text(format!(
                "the tool's work ended abnormally: {e}"
            ))]),
        }
    }

    /// [`Stead::blocking`] with a connection to the server (started if none serves).
    async fn calling<T, F>(&self, key: &'static str, work: F) -> CallToolResult
    where
        T: Serialize + Send + 'static,
        F: FnOnce(&mut Connection) -> anyhow::Result<T> + Send + 'static,
    {
        self.blocking(key, move |client| work(&mut crate::cli::connect(client)?))
            .await
    }

    /// [`Stead::blocking`] for a tool that may wait long: while it does, a client that
    /// sent a progress token hears every [`PROGRESS_EVERY`] how long it has waited (so
    /// it can show it, and keep a timeout that resets on progress from firing).
    async fn waiting<T, F>(
        &self,
        context: &RequestContext<RoleServer>,
        key: &'static str,
        work: F,
    ) -> CallToolResult
    where
        T: Serialize + Send + 'static,
        F: FnOnce(&Client) -> anyhow::Result<T> + Send + 'static,
    {
        let _ticker = context.meta.get_progress_token().map(|token| {
            let (peer, cancelled) = (context.peer.clone(), context.ct.clone());
            Ticker(tokio::spawn(async move {
                let started = tokio::time::Instant::now();
                let mut every = tokio::time::interval_at(started + PROGRESS_EVERY, PROGRESS_EVERY);
                loop {
                    tokio::select! {
                        _ = every.tick() => {}
                        // A cancelled call is not answered: nothing more to tell.
                        () = cancelled.cancelled() => return,
                    }
                    let waited = started.elapsed().as_secs_f64();
                    let note = ProgressNotificationParam::new(token.clone(), waited)
                        .with_message(format!("{key}: waited {waited:.0}s"));
                    if peer.notify_progress(note).await.is_err() {
                        return;
                    }
                }
            }))
        });
        self.blocking(key, work).await
    }
}

/// The progress task of a waiting tool, stopped when the call is answered or dropped
/// (a client's cancel drops it).
struct Ticker(tokio::task::JoinHandle<()>);

impl Drop for Ticker {
    fn drop(&mut self) {
        self.0.abort();
    }
}

fn answer(key: &str, value: &impl Serialize) -> CallToolResult {
    // The text straight from the value, so its fields are in the order the command
    // prints them.
    let encoded = serde_json::to_string_pretty(value)
        .and_then(|text| serde_json::to_value(value).map(|json| (text, json)));
    let (text, json) = match encoded {
        Ok(both) => both,
        Err(e) => {
            return CallToolResult::error(vec![ContentBlock::text(format!(
                "cannot encode the answer as JSON: {e}"
            ))]);
        }
    };
    let structured = match json {
        Value::Object(_) => json,
        other => serde_json::json!({ key: other }),
    };
    let mut result = CallToolResult::success(vec![ContentBlock::text(text)]);
    result.structured_content = Some(structured);
    result
}

/// A wait's `timeout` argument, checked and capped at [`MAX_WAIT`].
fn wait_limit(timeout: Option<&str>) -> Result<Duration, DataError> {
    let text = timeout.unwrap_or(DEFAULT_WAIT);
    let limit = schedule::parse_duration(text).map_err(|e| DataError(format!("timeout: {e}")))?;
    if limit > MAX_WAIT {
        return Err(DataError(format!(
            "timeout: {text} is longer than the {}s a tool may wait; wait again with run_wait or gate",
            MAX_WAIT.as_secs()
        )));
    }
    Ok(limit)
}

/// A wait's `timeout` as the command's own argument, once checked.
fn bounded(timeout: Option<&str>) -> Result<String, DataError> {
    wait_limit(timeout)?;
    Ok(timeout.unwrap_or(DEFAULT_WAIT).to_string())
}

/// Follows `run` to its last attempt (a retry after a genuine failure, the resume of a
/// cut run), as `stead run --wait` does, until `deadline`: the run as it is then.
fn last_attempt(
    client: &Client,
    conn: &mut Connection,
    run: Run,
    deadline: Instant,
) -> anyhow::Result<Run> {
    let waited = conn.wait_final_until(run, deadline, || crate::cli::connect(client))?;
    Ok(waited.into_run())
}
