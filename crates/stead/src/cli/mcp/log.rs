//! `run_log`: a bounded stretch of a run's output, as text an agent can read, with the
//! offset to read on from.
//!
//! A run of this machine is read from its log file, as `stead logs` reads it; a run of
//! another host of a shared ledger from the copy its host ships to the ledger. The run is
//! read before its log, so a run found ended has all of its output in what follows.

use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};

use anyhow::Context;
use serde::Serialize;
use stead_client::Connection;
use stead_protocol::RunStatus;
use stead_protocol::limits::MAX_RUN_LOG_READ;

use crate::cli::errors::DataError;
use crate::cli::logs;

/// How much is read when the call does not say.
const DEFAULT_READ: u64 = 64 * 1024;

/// What `run_log` answers.
#[derive(Debug, Serialize)]
pub struct LogStretch {
    pub id: i64,
    /// The run's status, read before the log.
    pub status: RunStatus,
    /// The byte the text starts at (the one asked for).
    pub offset: u64,
    /// The byte after the text: the `offset` of the next read.
    pub next_offset: u64,
    /// How many bytes of log there are now.
    pub size: u64,
    /// The bytes as text; bytes that are not UTF-8 are replaced with U+FFFD.
    pub text: String,
    /// The run has ended and the text reaches the end of its log: nothing more will come.
    pub complete: bool,
    /// Why some of the log is not here to read (kept on another host, still shipping).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

pub fn read(
    conn: &mut Connection,
    id: i64,
    offset: u64,
    max_bytes: Option<u64>,
) -> anyhow::Result<LogStretch> {
    let max = max_bytes.unwrap_or(DEFAULT_READ);
    if max == 0 || max > MAX_RUN_LOG_READ {
        return Err(DataError(format!(
            "max_bytes: {max} is not between 1 and {MAX_RUN_LOG_READ}"
        ))
        .into());
    }
    let run = conn.run_get(id)?;
    if let Some(when) = &run.log_pruned_at {
        return Err(DataError(format!(
            "run {id}'s log was pruned on {when} by retention (the run's record is kept: run_show)"
        ))
        .into());
    }
    let (bytes, size, note) = if logs::elsewhere(&run.machine_id) {
        let log = conn.run_log(id, offset, Some(max))?;
        let note = if log.kept_on_host {
            Some(format!(
                "the run ended before its host shipped logs to the ledger: its log is on host {}, in {}",
                log.host.as_deref().unwrap_or(&run.machine_id),
                run.log_path
            ))
        } else if log.status.is_terminal() && !log.complete {
            Some("the rest of the log is still to be shipped by the host that ran the run".into())
        } else {
            None
        };
        (
            log.bytes().map_err(anyhow::Error::msg)?,
            log.shipped_bytes,
            note,
        )
    } else {
        let (bytes, size) = read_file(&run.log_path, offset, max)
            .with_context(|| format!("cannot read run {id}'s log {}", run.log_path))?;
        (bytes, size, None)
    };
    let (text, used) = text_of(&bytes, offset + (bytes.len() as u64) < size);
    let next_offset = offset + used as u64;
    Ok(LogStretch {
        id,
        status: run.status,
        offset,
        next_offset,
        size,
        text,
        complete: run.status.is_terminal() && next_offset >= size && note.is_none(),
        note,
    })
}

/// Up to `max` bytes of the file from `offset`, and the file's length; nothing while the
/// file does not exist yet (a queued run).
fn read_file(path: &str, offset: u64, max: u64) -> io::Result<(Vec<u8>, u64)> {
    let mut file = match File::open(path) {
        Ok(file) => file,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok((Vec::new(), 0)),
        Err(e) => return Err(e),
    };
    let size = file.metadata()?.len();
    let mut bytes = Vec::new();
    if offset < size {
        file.seek(SeekFrom::Start(offset))?;
        file.take(max).read_to_end(&mut bytes)?;
    }
    Ok((bytes, size))
}

/// The bytes as text, and how many of them it covers: when more follows, a character cut
/// by the end of the stretch is left for the next read rather than replaced.
fn text_of(bytes: &[u8], more: bool) -> (String, usize) {
    let used = match std::str::from_utf8(bytes) {
        // An incomplete sequence at the very end (no error length) is a cut character.
        Err(e) if more && e.error_len().is_none() && e.valid_up_to() > 0 => e.valid_up_to(),
        _ => bytes.len(),
    };
    (String::from_utf8_lossy(&bytes[..used]).into_owned(), used)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_character_cut_by_the_stretch_is_left_for_the_next_read() {
        let line = "préface".as_bytes();
        // "pr" then the first byte of "é".
        let (text, used) = text_of(&line[..3], true);
        assert_eq!((text.as_str(), used), ("pr", 2));
        let (rest, _) = text_of(&line[used..], false);
        assert_eq!(rest, "éface");
    }

    #[test]
    fn at_the_end_of_the_log_bad_bytes_are_replaced_not_held_back() {
        let (text, used) = text_of(b"ok\xc3", false);
        assert_eq!((text.as_str(), used), ("ok\u{fffd}", 3));
        let (text, used) = text_of(b"\xff\xfeok", true);
        assert_eq!((text.as_str(), used), ("\u{fffd}\u{fffd}ok", 4));
    }
}
