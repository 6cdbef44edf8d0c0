//! The platform's conventions for where things go and what opens them: the default state
//! directory (`$XDG_STATE_HOME/stead`, default `~/.local/state/stead`, on Linux;
//! `~/Library/Application Support/stead` on macOS) and the program that opens a URL in
//! the desktop's browser (`xdg-open`; `open`).

use std::path::PathBuf;

use crate::os;

/// The platform's state directory for stead; `None` when there is no home to put it in.
pub fn default_state_dir() -> Option<PathBuf> {
    os::default_state_dir()
}

/// The program that opens a URL (its one argument) in the user's browser.
pub const URL_OPENER: &str = os::URL_OPENER;
