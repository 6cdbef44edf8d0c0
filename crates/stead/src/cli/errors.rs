//! Errors to exit codes and messages, in one place. The codes are documented in the
//! README and defined in `stead_protocol::exit`.

use std::io::Write;

use stead_protocol::{ErrorCode, exit};
use stead_server::lock::LockError;

use stead_client::ClientError;
use stead_client::config::ConfigError;
use stead_client::paths::PathsError;
use stead_core::schedule::ScheduleError;
use stead_server::startup::StartError;
use stead_store::StoreError;

/// Input data the command refused before sending anything (a job file that does not
/// parse, a name declared twice): exit 65. The message says what and where.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct DataError(pub String);

/// Prints `err` of a client command to stderr and returns its exit code.
pub fn report_error(err: &anyhow::Error) -> i32 {
    report(err, |_| None)
}

/// Prints `err` of a daemon program's command (which may come from starting a server
/// in-process, its lock or its ledger) to stderr and returns its exit code.
pub fn report_daemon_error(err: &anyhow::Error) -> i32 {
    report(err, daemon_code)
}

/// The exit code of an error only the daemon program meets, if `cause` is one. Kept out
/// of the client's path so that `stead` links none of the server or the ledger.
type DaemonCode = fn(&(dyn std::error::Error + 'static)) -> Option<i32>;

fn report(err: &anyhow::Error, daemon: DaemonCode) -> i32 {
    if is_broken_pipe(err) {
        // The reader went away (`stead runs | head`): nothing to say, nobody to say it to.
        return exit::SUCCESS;
    }
    // A spawned server's stderr may be a pipe its client already closed: never panic.
    let _ = writeln!(std::io::stderr(), "stead: {err:#}");
    exit_code(err, daemon)
}

fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|cause| {
        cause
            .downcast_ref::<std::io::Error>()
            .is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

fn exit_code(err: &anyhow::Error, daemon: DaemonCode) -> i32 {
    for cause in err.chain() {
        if let Some(code) = daemon(cause) {
            return code;
        }
        if let Some(e) = cause.downcast_ref::<ClientError>() {
            return match e {
                ClientError::Paths(_) => exit::IO_ERROR,
                ClientError::Config(_) => exit::CONFIG,
                ClientError::StartFailed { code, .. } => *code,
                ClientError::NotRunning { .. }
                | ClientError::Unavailable(_)
                | ClientError::Io(_)
                | ClientError::NoServerProgram => exit::UNAVAILABLE,
                ClientError::Server(body) => match body.code {
                    // The command line parsed, so what the server refused is the job
                    // data in it (a bad cron field, an unknown zone): a data error.
                    ErrorCode::InvalidParams => exit::DATA_ERROR,
                    ErrorCode::ShuttingDown | ErrorCode::StoreUnavailable => exit::UNAVAILABLE,
                    ErrorCode::InvalidJson
                    | ErrorCode::LineTooLong
                    | ErrorCode::InvalidRequest
                    | ErrorCode::UnknownMethod
                    | ErrorCode::Unauthorized
                    | ErrorCode::Forbidden
                    | ErrorCode::MethodNotAllowed
                    | ErrorCode::Internal => exit::SOFTWARE,
                    ErrorCode::NotFound | ErrorCode::Conflict => exit::FAILURE,
                },
                ClientError::Protocol(_) => exit::SOFTWARE,
            };
        }
        if cause.is::<DataError>() || cause.is::<ScheduleError>() {
            return exit::DATA_ERROR;
        }
        if cause.is::<ConfigError>() {
            return exit::CONFIG;
        }
        if cause.is::<PathsError>() {
            return exit::IO_ERROR;
        }
    }
    exit::FAILURE
}

fn daemon_code(cause: &(dyn std::error::Error + 'static)) -> Option<i32> {
    if let Some(e) = cause.downcast_ref::<StartError>() {
        return Some(match e {
            // Contention with other starters: transient, a retry may well succeed.
            StartError::LeaseHeld { .. } | StartError::Lock(LockError::MutexBusy { .. }) => {
                exit::UNAVAILABLE
            }
            StartError::Store(_) | StartError::Bind { .. } | StartError::Lock(_) => exit::IO_ERROR,
            StartError::Identity(_) => exit::SOFTWARE,
            // The configured address is taken or not this machine's: a setting to change.
            StartError::HttpBind { .. } | StartError::HttpUnsupported { .. } => exit::CONFIG,
            StartError::HttpToken { .. } => exit::IO_ERROR,
        });
    }
    cause.downcast_ref::<StoreError>().map(|e| match e {
        // A store URL that cannot be used as written is a setting to change.
        StoreError::LedgerUrl { .. } | StoreError::Unsupported { .. } => exit::CONFIG,
        _ => exit::IO_ERROR,
    })
}
