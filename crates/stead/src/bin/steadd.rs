//! `steadd`, the daemon program `stead` hands its server, monitors and heavier commands
//! to: see the library's documentation.

fn main() -> std::process::ExitCode {
    stead_cli::daemon_main()
}
