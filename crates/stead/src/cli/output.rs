//! What the commands print on stdout, in one place: a result as JSON (`--json`) or as
//! text for a person, and bytes copied as they are (a log, a script, a man page).
//!
//! A command that shows data flattens [`OutputArgs`] into its arguments and prints its
//! result with [`show`] (a type with one rendering implements [`Show`]) or, where the
//! text depends on the command (the same job is `added`, `removed` or `paused`),
//! [`show_with`]. The JSON is the value serialized as it is: its shape is the API.
//!
//! Nothing here panics on a closed stdout (`stead runs | head -1`): the write fails with
//! `BrokenPipe`, which the command returns and `errors.rs` turns into a quiet exit 0.

use std::io::{self, Read, Write};

use serde::Serialize;

// `--json`, for every command that shows data. (Not a doc comment: clap would make it
// the about text of every command that flattens this in.)
#[derive(Debug, Clone, Copy, clap::Args)]
pub struct OutputArgs {
    /// Print the result as JSON
    #[arg(long)]
    pub json: bool,
}

/// A command's result as a person reads it; `--json` prints the value itself.
pub trait Show: Serialize {
    /// The text, ending with a newline.
    fn human(&self) -> String;
}

/// Prints `value` as `format` asks: its JSON, or its [`Show::human`] text.
pub fn show(value: &impl Show, format: OutputArgs) -> io::Result<()> {
    show_with(value, format, || value.human())
}

/// Prints `value` as JSON, or the text `human` makes of it, as `format` asks.
pub fn show_with(
    value: &impl Serialize,
    format: OutputArgs,
    human: impl FnOnce() -> String,
) -> io::Result<()> {
    if format.json {
        json(value)
    } else {
        text(&human())
    }
}

/// Prints `value` as pretty JSON followed by a newline, in one write (stdout is line
/// buffered: written as it serializes, each line of the JSON would be a system call).
pub fn json(value: &impl Serialize) -> io::Result<()> {
    let mut bytes = serde_json::to_vec_pretty(value).map_err(io::Error::from)?;
    bytes.push(b'\n');
    text_bytes(&bytes)
}

/// Prints text as is (it should end with a newline).
pub fn text(s: &str) -> io::Result<()> {
    text_bytes(s.as_bytes())
}

fn text_bytes(bytes: &[u8]) -> io::Result<()> {
    let mut out = io::stdout().lock();
    out.write_all(bytes)?;
    out.flush()
}

/// Copies everything `from` has left (up to its current end) to stdout, as bytes, and
/// flushes: a followed log is shown as it grows, not when a buffer fills.
pub fn copy(from: &mut impl Read) -> io::Result<u64> {
    let mut out = io::stdout().lock();
    let copied = io::copy(from, &mut out)?;
    out.flush()?;
    Ok(copied)
}
