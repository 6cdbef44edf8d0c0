//! The `stead` command and its daemon: two programs over this one library.
//!
//! - `stead` (`src/main.rs`), the client: every command that talks to a server, and so
//!   the one people and scripts run all day. It links none of the server, the ledger's
//!   database engines, the guard's shell parser or the MCP server, so that a command
//!   starts in about a millisecond instead of paying for loading a binary ten times its
//!   size.
//! - `steadd` (`src/bin/steadd.rs`), the daemon program, installed beside it: the server
//!   (`stead serve`), each run's monitor, the spawner of monitors, and the commands that
//!   need what the client leaves out (`doctor`, `guard`, `mcp`, `completions`, `man`).
//!   `stead` hands those over by exec'ing `steadd` with its own command line (same pid,
//!   same descriptors), so people only ever type `stead`.
//!
//! Each command's module is in `cli/`, the read-only diagnosis of a state directory in
//! [`doctor`], the bounded runner of restart and ready commands in [`ready_check`], what
//! and the server's own size-rotated log in [`server_log`]. A daemon, a monitor and the
//! spawner start with only stdin, stdout and stderr: they close whatever else they
//! inherited before they open anything (`stead_sys::fds`).

mod cli;
mod doctor;
mod ready_check;
mod server_log;

use std::process::ExitCode;

use clap::Parser;

/// `stead`: runs the client's commands here and hands the others to `steadd`.
pub fn client_main() -> ExitCode {
    let code = match cli::run_client(cli::Cli::parse()) {
        Ok(code) => code,
        Err(err) => cli::report_error(&err),
    };
    exit_code(code)
}

/// `steadd`: the daemon, monitors, the spawner and the commands `stead` hands over.
pub fn daemon_main() -> ExitCode {
    let args = cli::Cli::parse_daemon();
    if args.command.is_long_lived() {
        stead_sys::fds::close_inherited();
    }
    let code = match cli::run_daemon(args) {
        Ok(code) => code,
        Err(err) => cli::report_daemon_error(&err),
    };
    exit_code(code)
}

fn exit_code(code: i32) -> ExitCode {
    ExitCode::from(u8::try_from(code).unwrap_or(1))
}
