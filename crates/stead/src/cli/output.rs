//! Writing to stdout without panicking on a closed pipe.

use std::io::{self, Read, Write};

use serde::Serialize;

/// Prints `value` as pretty JSON followed by a newline.
pub fn json(value: &impl Serialize) -> io::Result<()> {
    let mut out = io::stdout().lock();
    serde_json::to_writer_pretty(&mut out, value).map_err(io::Error::from)?;
    writeln!(out)
}

/// Prints text as is (it should end with a newline).
pub fn text(s: &str) -> io::Result<()> {
    let mut out = io::stdout().lock();
    out.write_all(s.as_bytes())?;
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
