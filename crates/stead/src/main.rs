//! The `stead` command: the CLI, the daemon (`stead serve`) and the per-run monitor
//! (`stead monitor`, hidden) in one binary. Parses arguments and hands over to
//! [`cli::run`]; each command's module is in `cli/`, the read-only diagnosis of a state
//! directory in [`doctor`], and the bounded runner of restart and ready commands in
//! [`ready_check`].

mod cli;
mod doctor;
mod ready_check;

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let args = cli::Cli::parse();
    let code = match cli::run(args) {
        Ok(code) => code,
        Err(err) => cli::report_error(&err),
    };
    ExitCode::from(u8::try_from(code).unwrap_or(1))
}
