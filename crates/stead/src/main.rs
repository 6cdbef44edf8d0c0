//! `stead`, the client program: see the library's documentation for how it and the
//! daemon program `steadd` share the work.

fn main() -> std::process::ExitCode {
    stead_cli::client_main()
}
