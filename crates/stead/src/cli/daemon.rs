//! The two programs' meeting point: where the daemon program `steadd` is (beside the
//! running program, whichever of the two it is), handing a command over to it, and what
//! `steadd` says to a command that belongs to `stead`.

use std::ffi::OsString;
use std::os::unix::process::CommandExt;
use std::path::PathBuf;

use stead_client::ClientError;
use stead_protocol::{STEAD_DAEMON, exit};

use super::Command;

/// The client program's name, beside which `steadd` is installed.
const CLIENT_PROGRAM: &str = "stead";

/// How to get both programs, for the messages that find one missing.
const INSTALL_HINT: &str = "`stead` and `steadd` are built together (`cargo build --release`) \
     and installed together (`cargo install --path crates/stead`), side by side";

/// `steadd` beside the running program; an error that says how to get it when it is not
/// there (so that nothing waits out a start timeout for a program that cannot start).
pub fn program() -> Result<PathBuf, ClientError> {
    located().map_err(|message| ClientError::StartFailed {
        code: exit::UNAVAILABLE,
        message,
    })
}

/// Where `steadd` would be, whether or not it is there.
pub fn sibling_daemon() -> std::io::Result<PathBuf> {
    sibling(STEAD_DAEMON)
}

fn located() -> Result<PathBuf, String> {
    let path = sibling_daemon().map_err(|e| format!("cannot find the running program: {e}"))?;
    if path.is_file() {
        return Ok(path);
    }
    Err(format!(
        "the daemon program {} is missing: {INSTALL_HINT}",
        path.display()
    ))
}

/// `stead` beside the running program: what a gate run by path must be for the guard
/// (running in `steadd`) to count it as this installation's.
pub fn client_program() -> Option<PathBuf> {
    sibling(CLIENT_PROGRAM).ok()
}

/// The running program's path (symbolic links resolved, so a link to `stead` on PATH
/// finds the `steadd` beside the real file) with its name replaced.
fn sibling(name: &str) -> std::io::Result<PathBuf> {
    // current_exe resolves links on Linux only: canonicalize says the same everywhere.
    let exe = std::env::current_exe()?;
    Ok(exe.canonicalize().unwrap_or(exe).with_file_name(name))
}

/// Replaces this process with `steadd` running the same command line: the same pid,
/// descriptors and environment, and `argv[0]` kept, so the process still reads as
/// `stead serve` to `ps` and `pkill -f`. Returns only when the exec failed, with the
/// exit code to leave with.
pub fn hand_over(command: &Command) -> i32 {
    let mut args = std::env::args_os();
    let arg0 = args
        .next()
        .unwrap_or_else(|| OsString::from(CLIENT_PROGRAM));
    let why = match located() {
        Ok(path) => {
            let err = std::process::Command::new(&path)
                .arg0(arg0)
                .args(args)
                .exec();
            format!("cannot run the daemon program {}: {err}", path.display())
        }
        Err(why) => why,
    };
    eprintln!("stead: {why}");
    match command {
        // An agent's hook reads any other code as "go ahead": without its reader the
        // guard refuses.
        Command::Guard(_) => stead_guard::EXIT_REFUSED,
        _ => exit::UNAVAILABLE,
    }
}

/// `steadd status` and the like: the client's commands are `stead`'s.
pub fn refuse_client_command() -> i32 {
    eprintln!(
        "steadd: this is stead's daemon program, which runs the server, run monitors and \
         the commands stead hands it; run this command with stead (`stead --help` lists them)"
    );
    exit::USAGE
}
