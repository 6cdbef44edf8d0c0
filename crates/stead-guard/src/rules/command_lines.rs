//! The command lines of stead's own processes, as `ps` shows them and `pkill -f`
//! matches them (the arguments joined by spaces): the server as typed (`stead serve`,
//! `stead serve --state-dir DIR`), as its unit starts it (`…/stead --state-dir DIR
//! serve`) and as a client starts it (`…/steadd --state-dir DIR serve --spawned`); each
//! run's monitor (`…/steadd --state-dir DIR monitor`, also when the spawner forked it:
//! its last word is rewritten in place); the spawner of monitors (`…/steadd
//! --state-dir DIR spawner`).
//!
//! The directories in them are the guard's own where it knows them (its state
//! directory, the default one, the directory of its program) and typical ones where it
//! does not, so a pattern counts when it matches a line of the stead being guarded. A
//! pattern that matches only another ledger's directory (`state-dir /tmp/other serve`)
//! cuts nothing on this one.

use std::path::Path;

use stead_protocol::{STEAD_DAEMON, STEAD_SERVICE};

use crate::stead_cmd::Protected;

/// Where stead is found when the guard does not know its own program: installed, or
/// built in a checkout and run from there.
const TYPICAL_PROGRAM_DIRS: &[&str] = &["/usr/local/bin", "/home/user/.cargo/bin", "target/debug"];

/// A state directory, when the guard knows neither its own nor the default one.
const TYPICAL_STATE_DIR: &str = "/home/user/.local/state/stead";

/// What a server is given besides its state directory.
const SERVE: &[&str] = &[
    "serve",
    "serve --http 0.0.0.0:8080 --http-allow-remote",
    "serve --store postgres://localhost/stead",
];

/// Every command line a process of the stead `dirs` describes may show.
pub(crate) fn of(dirs: &Protected) -> Vec<String> {
    let program_dirs: Vec<String> = match dirs.exe.as_deref().and_then(Path::parent) {
        Some(dir) => vec![dir.to_string_lossy().into_owned()],
        None => TYPICAL_PROGRAM_DIRS.iter().map(|d| d.to_string()).collect(),
    };
    let mut programs = vec![STEAD_SERVICE.to_owned(), STEAD_DAEMON.to_owned()];
    for dir in &program_dirs {
        programs.push(format!("{dir}/{STEAD_SERVICE}"));
        programs.push(format!("{dir}/{STEAD_DAEMON}"));
    }
    let mut state_dirs: Vec<String> = [&dirs.state_dir, &dirs.default_state_dir]
        .into_iter()
        .flatten()
        .map(|d| d.to_string_lossy().into_owned())
        .collect();
    state_dirs.dedup();
    if state_dirs.is_empty() {
        state_dirs.push(TYPICAL_STATE_DIR.to_owned());
    }
    let mut tails: Vec<String> = SERVE.iter().map(|s| s.to_string()).collect();
    for dir in &state_dirs {
        tails.extend([
            format!("--state-dir {dir} serve"),
            format!("--state-dir={dir} serve"),
            format!("serve --state-dir {dir}"),
            format!("--state-dir {dir} serve --spawned"),
            format!("--state-dir {dir} monitor"),
            format!("--state-dir {dir} spawner"),
        ]);
    }
    programs
        .iter()
        .flat_map(|program| tails.iter().map(move |tail| format!("{program} {tail}")))
        .collect()
}
