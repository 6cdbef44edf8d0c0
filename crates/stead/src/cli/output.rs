//! Writing to stdout without panicking on a closed pipe.

use std::io::{self, Read, Write};

use serde::Serialize;

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
