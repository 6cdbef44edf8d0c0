//! Errors to exit codes and messages, in one place. The codes are documented in
//! docs/cli.md and defined in `stead_protocol::exit`.

use std::io::Write;

use stead_protocol::{ErrorCode, exit};
use stead_server::system::lock::LockError;

use stead_client::ClientError;
use stead_client::config::ConfigError;
use stead_client::paths::PathsError;
use stead_client::secrets::SecretError;
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
                ClientError::Server(body) => server_code(body.code),
                // `Protocol`, and what a later client library may add.
                _ => exit::SOFTWARE,
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
        if let Some(e) = cause.downcast_ref::<SecretError>() {
            return match e {
                SecretError::Name(_) | SecretError::Value { .. } => exit::DATA_ERROR,
                SecretError::NoSuchSecret(_) => exit::FAILURE,
                _ => exit::IO_ERROR,
            };
        }
    }
    exit::FAILURE
}

/// The exit code of a request the server answered with an error `code`.
fn server_code(code: ErrorCode) -> i32 {
    match code {
        // The command line parsed, so what the server refused is the job data in it (a
        // bad cron field, an unknown zone): a data error.
        ErrorCode::InvalidParams => exit::DATA_ERROR,
        ErrorCode::ShuttingDown | ErrorCode::StoreUnavailable => exit::UNAVAILABLE,
        ErrorCode::NotFound | ErrorCode::Conflict => exit::FAILURE,
        // The client's own mistakes (a malformed or unknown request, a refused token),
        // `Internal`, and codes of a later protocol.
        _ => exit::SOFTWARE,
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Each code of this protocol exits as decided here; a code the protocol adds fails
    /// this test until it is decided.
    #[test]
    fn every_error_code_has_its_exit_code() {
        let decided = [
            (ErrorCode::InvalidJson, exit::SOFTWARE),
            (ErrorCode::LineTooLong, exit::SOFTWARE),
            (ErrorCode::InvalidRequest, exit::SOFTWARE),
            (ErrorCode::UnknownMethod, exit::SOFTWARE),
            (ErrorCode::InvalidParams, exit::DATA_ERROR),
            (ErrorCode::NotFound, exit::FAILURE),
            (ErrorCode::Conflict, exit::FAILURE),
            (ErrorCode::ShuttingDown, exit::UNAVAILABLE),
            (ErrorCode::StoreUnavailable, exit::UNAVAILABLE),
            (ErrorCode::Unauthorized, exit::SOFTWARE),
            (ErrorCode::Forbidden, exit::SOFTWARE),
            (ErrorCode::MethodNotAllowed, exit::SOFTWARE),
            (ErrorCode::Internal, exit::SOFTWARE),
        ];
        assert_eq!(
            decided.map(|(code, _)| code),
            ErrorCode::ALL,
            "every code, in order"
        );
        for (code, exit) in decided {
            assert_eq!(server_code(code), exit, "{code:?}");
        }
    }
}
