//! The `stead` command. Parses arguments and hands over to [`cli::run`].

mod cli;

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
