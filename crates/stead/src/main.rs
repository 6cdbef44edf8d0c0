//! The `stead` command: the CLI, the daemon (`stead serve`) and the per-run monitor
//! (`stead monitor`, hidden) in one binary. Parses arguments and hands over to
//! [`cli::run`]; each command's module is in `cli/`, the read-only diagnosis of a state
//! directory in [`doctor`], the bounded runner of restart and ready commands in
//! [`ready_check`], what a daemon or monitor closes as it starts in [`fds`], and the
//! server's own size-rotated log in [`server_log`].

mod cli;
mod doctor;
mod fds;
mod ready_check;
mod server_log;

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let args = cli::Cli::parse();
    if args.command.is_long_lived() {
        fds::close_inherited();
    }
    let code = match cli::run(args) {
        Ok(code) => code,
        Err(err) => cli::report_error(&err),
    };
    ExitCode::from(u8::try_from(code).unwrap_or(1))
}
