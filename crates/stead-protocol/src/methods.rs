//! The methods a server answers, declared once: each one's wire name, parameters and
//! result.
//!
//! From the one table below come a type per method in [`method`] (implementing
//! [`Method`], which is what a client calls), the [`Request`] enum a server parses a
//! request line into and matches exhaustively, and [`MethodId`], which the HTTP routes
//! match exhaustively. A method added here that the server, the client or the HTTP
//! layer does not handle is a compile error, not a runtime "unknown method".

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::{
    ApplyParams, ApplyResult, Checkpoint, CheckpointGet, CheckpointSet, Checkpoints, ErrorBody,
    ErrorCode, Hold, HoldName, HoldSpec, HostsResult, HttpEndpoint, HttpParams, Job, JobName,
    JobSpec, MonitorCheck, MonitorFinished, MonitorNext, MonitorNextRun, MonitorStarted,
    MonitorVerdict, Notifier, NotifierName, NotifierSpec, NotifyTestResult, PauseParams,
    PruneParams, PruneResult, Queue, QueueName, QueueSpec, Readiness, ReadinessParams, RestartMark,
    Run, RunFilter, RunId, RunLog, RunLogParams, RunNow, RunWait, Service, ServiceName,
    ServiceSpec, SetEnabled, Sleep, SleepFilter, StatusResult, Step, StepParams, StepState,
    StopParams, StopResult,
};

/// One method of the protocol.
pub trait Method {
    /// The name on the wire.
    const NAME: &'static str;
    /// What the request's `params` hold.
    type Params: Serialize + DeserializeOwned;
    /// What the response's `result` holds.
    type Output: Serialize + DeserializeOwned;
}

/// Parameters of a method that takes none: sent as `{}`, and whatever arrives is
/// ignored. Also the result of a method that answers nothing but success (`{}`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Empty {}

/// How a method's `params` are read.
mod params {
    use super::*;

    /// Parameters that must be given, as an object.
    pub fn required<T: DeserializeOwned>(value: Value) -> Result<T, ErrorBody> {
        if !value.is_object() {
            return Err(ErrorBody::new(
                ErrorCode::InvalidParams,
                "invalid params: expected an object",
            ));
        }
        serde_json::from_value(value)
            .map_err(|e| ErrorBody::new(ErrorCode::InvalidParams, format!("invalid params: {e}")))
    }

    /// Parameters that may be left out entirely (`null` or absent: the defaults).
    pub fn optional<T: DeserializeOwned + Default>(value: Value) -> Result<T, ErrorBody> {
        if value.is_null() {
            return Ok(T::default());
        }
        required(value)
    }

    /// Parameters of a method that takes none: anything is accepted, and ignored.
    pub fn ignored(_: Value) -> Result<Empty, ErrorBody> {
        Ok(Empty {})
    }
}

macro_rules! methods {
    ($(
        $(#[$doc:meta])*
        $ty:ident = $name:literal, $mode:ident($params:ty) -> $output:ty;
    )*) => {
        /// A type per method, to name it in a typed call (`conn.call::<method::Status>(...)`).
        pub mod method {
            $(
                $(#[$doc])*
                #[derive(Debug, Clone, Copy, PartialEq, Eq)]
                pub struct $ty;
            )*
        }

        $(
            impl Method for method::$ty {
                const NAME: &'static str = $name;
                type Params = $params;
                type Output = $output;
            }
        )*

        /// A request line's method and parameters, parsed: what a server dispatches on.
        // One per request line, moved once into its handler: a job spec inline costs
        // nothing worth a box per request.
        #[allow(clippy::large_enum_variant)]
        #[derive(Debug, Clone, PartialEq)]
        pub enum Request {
            $( $(#[$doc])* $ty($params), )*
        }

        /// A method without its parameters: what the HTTP routes are declared for.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum MethodId {
            $( $(#[$doc])* $ty, )*
        }

        impl MethodId {
            /// Every method, in the order of the protocol's documentation.
            pub const ALL: &'static [MethodId] = &[$(MethodId::$ty),*];

            /// The name on the wire.
            pub fn name(self) -> &'static str {
                match self {
                    $( MethodId::$ty => $name, )*
                }
            }
        }

        impl Request {
            /// Reads a request's method and parameters. An unknown method is
            /// [`ErrorCode::UnknownMethod`], naming the methods there are; parameters
            /// that do not fit the method are [`ErrorCode::InvalidParams`].
            pub fn parse(method: &str, params: Value) -> Result<Self, ErrorBody> {
                match method {
                    $( $name => Ok(Request::$ty(params::$mode(params)?)), )*
                    other => Err(ErrorBody::new(
                        ErrorCode::UnknownMethod,
                        format!(
                            "unknown method {other:?}; this server answers: {}",
                            MethodId::ALL
                                .iter()
                                .map(|m| m.name())
                                .collect::<Vec<_>>()
                                .join(", ")
                        ),
                    )),
                }
            }

            /// Which method this is.
            pub fn id(&self) -> MethodId {
                match self {
                    $( Request::$ty(_) => MethodId::$ty, )*
                }
            }
        }
    };
}

methods! {
    /// Server identity, lease and paths.
    Status = "status", ignored(Empty) -> StatusResult;
    /// Graceful stop; answered once socket, lease and lock file are released.
    Stop = "stop", optional(StopParams) -> StopResult;
    /// Add a job.
    JobAdd = "job_add", required(JobSpec) -> Job;
    /// All jobs, by name.
    JobList = "job_list", ignored(Empty) -> Vec<Job>;
    /// One job.
    JobGet = "job_get", required(JobName) -> Job;
    /// Remove a job; the removed job is answered.
    JobRemove = "job_remove", required(JobName) -> Job;
    /// Enable or disable a job.
    JobSetEnabled = "job_set_enabled", required(SetEnabled) -> Job;
    /// Make the jobs and services match a declared set.
    Apply = "apply", required(ApplyParams) -> ApplyResult;
    /// Start a run now.
    RunNow = "run_now", required(RunNow) -> Run;
    /// Runs, newest first.
    RunList = "run_list", optional(RunFilter) -> Vec<Run>;
    /// One run.
    RunGet = "run_get", required(RunId) -> Run;
    /// Wait for a run to end (or a timeout) and answer it as it is then.
    RunWait = "run_wait", required(RunWait) -> Run;
    /// Cancel a run.
    RunCancel = "run_cancel", required(RunId) -> Run;
    /// Declare a service.
    ServiceAdd = "service_add", required(ServiceSpec) -> Service;
    /// All services, the built-in `stead` first.
    ServiceList = "service_list", ignored(Empty) -> Vec<Service>;
    /// Remove a service; the removed service is answered.
    ServiceRemove = "service_remove", required(ServiceName) -> Service;
    /// Acquire or renew a hold.
    HoldAcquire = "hold_acquire", required(HoldSpec) -> Hold;
    /// Release a hold; the released hold is answered.
    HoldRelease = "hold_release", required(HoldName) -> Hold;
    /// All holds, live and wedged.
    HoldList = "hold_list", ignored(Empty) -> Vec<Hold>;
    /// What a restart would cut now (or, with `wait_ms`, once that changes).
    Readiness = "readiness", optional(ReadinessParams) -> Readiness;
    /// A gated restart begins.
    RestartBegin = "restart_begin", required(RestartMark) -> Empty;
    /// A gated restart ended (the service is ready).
    RestartEnd = "restart_end", required(RestartMark) -> Empty;
    /// The HTTP API's address and token.
    Http = "http", optional(HttpParams) -> HttpEndpoint;
    /// The hosts sharing the ledger.
    Hosts = "hosts", ignored(Empty) -> HostsResult;
    /// A stretch of a run's log as a shared ledger holds it.
    RunLog = "run_log", required(RunLogParams) -> RunLog;
    /// A monitor marks its run running (shared ledgers); answers whether it was queued.
    MonitorStarted = "monitor_started", required(MonitorStarted) -> bool;
    /// A monitor records its run's end (shared ledgers); answers whether it was recorded.
    MonitorFinished = "monitor_finished", required(MonitorFinished) -> bool;
    /// A monitor asks whether its run is still its host's (shared ledgers).
    MonitorCheck = "monitor_check", required(MonitorCheck) -> MonitorVerdict;
    /// A monitor done with its run offers to take another (on its link only).
    MonitorNext = "monitor_next", required(MonitorNext) -> MonitorNextRun;
    /// Apply the retention rules now (or, with `dry_run`, say what they would remove).
    Prune = "prune", optional(PruneParams) -> PruneResult;
    /// Pause a job until a time, or unpause it.
    JobPause = "job_pause", required(PauseParams) -> Job;
    /// Create or change a queue.
    QueueSet = "queue_set", required(QueueSpec) -> Queue;
    /// All queues, by name.
    QueueList = "queue_list", ignored(Empty) -> Vec<Queue>;
    /// Remove a queue; the removed queue is answered.
    QueueRemove = "queue_remove", required(QueueName) -> Queue;
    /// Add (or replace) a notifier.
    NotifyAdd = "notify_add", required(NotifierSpec) -> Notifier;
    /// All notifiers, by name.
    NotifyList = "notify_list", ignored(Empty) -> Vec<Notifier>;
    /// Remove a notifier and its undelivered events; the removed notifier is answered.
    NotifyRemove = "notify_remove", required(NotifierName) -> Notifier;
    /// POST a test event to a notifier now and say what it answered.
    NotifyTest = "notify_test", required(NotifierName) -> NotifyTestResult;
    /// The sleeps the machine woke from, newest first.
    SleepList = "sleep_list", optional(SleepFilter) -> Vec<Sleep>;
    /// A run records a checkpoint under its idempotency key (the run holding the key only).
    CheckpointSet = "checkpoint_set", required(CheckpointSet) -> Checkpoint;
    /// One checkpoint of a run's idempotency key; `null` when it is not set.
    CheckpointGet = "checkpoint_get", required(CheckpointGet) -> Option<Checkpoint>;
    /// The checkpoints and completed steps of a run's idempotency key.
    CheckpointList = "checkpoint_list", required(RunId) -> Checkpoints;
    /// Whether a run's step completed already under its idempotency key.
    StepBegin = "step_begin", required(StepParams) -> StepState;
    /// A run records a step's completion (the run holding the key only).
    StepDone = "step_done", required(StepParams) -> Step;
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn every_method_parses_by_its_own_name() {
        for id in MethodId::ALL {
            // The parameters may be wrong for the method, but the name is always known.
            if let Err(e) = Request::parse(id.name(), json!({})) {
                assert_eq!(e.code, ErrorCode::InvalidParams, "{}: {e:?}", id.name());
            }
        }
        let names: std::collections::BTreeSet<_> = MethodId::ALL.iter().map(|m| m.name()).collect();
        assert_eq!(
            names.len(),
            MethodId::ALL.len(),
            "a wire name is used twice"
        );
    }

    #[test]
    fn parameters_are_read_as_each_method_declares() {
        // Ignored: anything goes.
        assert_eq!(
            Request::parse("job_list", json!([1, 2])).unwrap(),
            Request::JobList(Empty {})
        );
        // Optional: left out means the defaults.
        assert_eq!(
            Request::parse("run_list", Value::Null).unwrap(),
            Request::RunList(RunFilter::default())
        );
        // Required: an object of the right shape.
        let e = Request::parse("job_get", Value::Null).unwrap_err();
        assert_eq!(e.message, "invalid params: expected an object");
        let e = Request::parse("job_get", json!({"nom": "x"})).unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidParams);
        assert_eq!(
            Request::parse("job_get", json!({"name": "x"})).unwrap(),
            Request::JobGet(JobName { name: "x".into() })
        );
        assert_eq!(
            Request::JobGet(JobName { name: "x".into() }).id(),
            MethodId::JobGet
        );
    }

    #[test]
    fn an_unknown_method_names_every_known_one() {
        let e = Request::parse("nope", Value::Null).unwrap_err();
        assert_eq!(e.code, ErrorCode::UnknownMethod);
        assert!(
            e.message
                .starts_with("unknown method \"nope\"; this server answers: status, stop, job_add")
        );
        assert!(
            e.message.ends_with(
                "prune, job_pause, queue_set, queue_list, queue_remove, notify_add, notify_list, notify_remove, notify_test, sleep_list, checkpoint_set, checkpoint_get, checkpoint_list, step_begin, step_done"
            ),
            "{}",
            e.message
        );
    }

    #[test]
    fn empty_parameters_and_results_are_an_empty_object() {
        assert_eq!(serde_json::to_value(Empty {}).unwrap(), json!({}));
        let _: Empty = serde_json::from_value(json!({})).unwrap();
    }
}

#[cfg(test)]
mod log_tests {
    use crate::RunLog;

    #[test]
    fn log_bytes_travel_as_base64_and_say_where_they_end() {
        for n in 0..7 {
            let bytes: Vec<u8> = (0..n).map(|i| (i * 97) as u8).collect();
            let log = RunLog {
                id: 1,
                status: crate::RunStatus::Running,
                offset: 10,
                data: RunLog::encode(&bytes),
                shipped_bytes: 10 + n,
                complete: false,
                kept_on_host: false,
                host: None,
                host_state: None,
            };
            assert_eq!(log.bytes().unwrap(), bytes);
            assert_eq!(log.end(), 10 + n);
        }
    }
}
