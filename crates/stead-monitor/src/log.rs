//! A run's log file: the command's stdout and stderr interleaved as raw bytes, capped at
//! the plan's size, plus the monitor's own `[stead: ...]` notes.
//!
//! Past the cap the monitor keeps reading the command's pipes (a full pipe would block
//! the command) but discards what it reads, and says so once.
//!
//! Room for the ledger: output stops being written while the file system holding the log
//! has less free than its reserve (`[logs] keep_free`), so a run whose output would fill
//! the disk leaves room for the ledger (beside it by default) to record how it ends; the
//! log then says how much was dropped and why, and writing resumes once there is room
//! again. A write that fails anyway (the disk filled by something else) drops that output
//! the same way rather than stopping the run.
//!
//! The run's secrets never reach the file: each value is written as `[secret NAME]`
//! (see `mask`).
//!
//! A run's log is a new file: created with `O_CREAT | O_EXCL | O_NOFOLLOW` (mode 0600),
//! so a file or a link planted at the run's predictable path (`logs/runs/ID.log`, by an
//! earlier run of the same user, say) is never followed, appended to or passed off as
//! the run's output: when the monitor starts, a path already taken makes the run fail to
//! start, saying why.
//!
//! The file is created when there is a first byte to write (output, or a note of the
//! monitor's), not before: a run that prints nothing, as most scheduled jobs do, leaves
//! no file, and readers take a missing log for an empty one. Creating a file is the one
//! step of a run's start that waits on the file system's allocator (on ext4, for a
//! directory that has seen many files deleted, it costs more than the whole rest of a
//! start). Should the path be taken between the check and the first write, nothing is
//! written to it; the run's end then says what was lost ([`Log::finish`]).

use std::fs::{DirBuilder, File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use stead_protocol::KeepFree;
use stead_sys::disk::space_of;

use super::mask::Masks;

/// How often, in bytes written, the free space is read again while well above the
/// reserve: a statvfs per 64 KiB is nothing beside the writes.
const CHECK_EVERY: u64 = 64 * 1024;

#[derive(Debug)]
pub struct Log {
    path: PathBuf,
    /// The file, once something was written to it.
    file: Option<File>,
    keep_free: KeepFree,
    /// Bytes in the file, the monitor's notes included.
    len: u64,
    max: u64,
    truncated: bool,
    /// Whether the last byte written ends a line, so a note starts on a line of its own.
    at_line_start: bool,
    room: Room,
    /// The values the command was handed, masked in its output.
    masks: Masks,
}

/// The free space of the log's file system, as last read, and what was dropped for want
/// of it.
#[derive(Debug)]
struct Room {
    /// Bytes kept free (0: no reserve, or a file system that cannot say).
    reserve: u64,
    /// Free bytes when last read, and bytes written since.
    free: u64,
    written_since: u64,
    /// Output dropped since the log last said so, and why.
    dropped: u64,
    why: Option<String>,
}

impl Log {
    /// The log at `path`, to be created (0600) at the first write, in directories made
    /// now (0700): output is private to the user whose jobs run. Anything already at
    /// `path` is refused, never opened.
    pub fn open(path: &Path, max: u64, keep_free: KeepFree) -> io::Result<Self> {
        make_parent(path)?;
        match std::fs::symlink_metadata(path) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => return Err(e),
            Ok(_) => return Err(taken()),
        }
        Ok(Self {
            path: path.to_path_buf(),
            file: None,
            keep_free,
            len: 0,
            max,
            truncated: false,
            at_line_start: true,
            room: Room {
                reserve: 0,
                free: u64::MAX,
                written_since: 0,
                dropped: 0,
                why: None,
            },
            masks: Masks::default(),
        })
    }

    /// Masks these secrets in all output from now on.
    pub fn mask(&mut self, masks: Masks) {
        self.masks = masks;
    }

    /// Appends output read from `stream` (0: stdout, 1: stderr), masked, up to the cap,
    /// while the disk has room.
    pub fn output(&mut self, stream: usize, bytes: &[u8]) {
        let masked = self.masks.pass(stream, bytes);
        self.append(&masked);
    }

    /// `stream` ended (or is no longer read): what it kept back goes in.
    pub fn end_output(&mut self, stream: usize) {
        let rest = self.masks.end(stream);
        if !rest.is_empty() {
            self.append(&rest);
        }
    }

    fn append(&mut self, bytes: &[u8]) {
        if self.truncated {
            return;
        }
        let room = usize::try_from(self.max.saturating_sub(self.len)).unwrap_or(usize::MAX);
        let kept = &bytes[..bytes.len().min(room)];
        // Created first, so that the reserve is known before the first bytes go in.
        let refused = match self.created() {
            Ok(_) => self.no_room_for(kept.len() as u64),
            Err(e) => Some(format!("the log could not be created ({e})")),
        };
        match refused {
            Some(why) => self.drop_output(kept.len() as u64, why),
            None => {
                self.say_dropped("writing again");
                if let Err(e) = self.write(kept) {
                    self.drop_output(kept.len() as u64, format!("a write failed ({e})"));
                }
            }
        }
        if bytes.len() > room {
            self.truncated = true;
            self.note(&format!(
                "log truncated at {} bytes; further output discarded",
                self.max
            ));
        }
    }

    /// Appends `[stead: TEXT]` on a line of its own, whatever the cap and the reserve (a
    /// note is small, and the reserve exists so that such lines fit); best effort.
    pub fn note(&mut self, text: &str) {
        self.say_dropped("then");
        let lead = if self.at_line_start { "" } else { "\n" };
        let _ = self.write(format!("{lead}[stead: {text}]\n").as_bytes());
    }

    /// Says how much output was dropped for want of room, if any is unsaid: called once
    /// the command is done, before the run's end is recorded. Answers what could not be
    /// said in the log because it could not be created, for the run's end to say.
    pub fn finish(&mut self) -> Option<String> {
        self.say_dropped("to the end of the command");
        let lost = (self.room.dropped > 0).then(|| {
            format!(
                "{} bytes of output lost: {}",
                self.room.dropped,
                self.room
                    .why
                    .as_deref()
                    .unwrap_or("the log could not be written")
            )
        });
        self.room.dropped = 0;
        lost
    }

    /// The file, created now if nothing was written yet, with the free space of its disk
    /// read once it exists.
    fn created(&mut self) -> io::Result<&mut File> {
        if self.file.is_none() {
            let file = create_new(&self.path).map_err(|e| match e.kind() {
                io::ErrorKind::AlreadyExists => taken(),
                _ => e,
            })?;
            let (free, total) = space_of(&file).unwrap_or((u64::MAX, 0));
            self.room.reserve = self.keep_free.bytes_of(total);
            self.room.free = free;
            self.file = Some(file);
        }
        Ok(self.file.as_mut().expect("created above"))
    }

    /// Why `n` more bytes may not be written, if they may not: the reserve would be
    /// breached. The free space is read again every [`CHECK_EVERY`] bytes, and at every
    /// write once near the reserve.
    fn no_room_for(&mut self, n: u64) -> Option<String> {
        let room = &mut self.room;
        if room.reserve == 0 {
            return None;
        }
        let estimate = room.free.saturating_sub(room.written_since);
        let due = room.written_since + n >= CHECK_EVERY
            || estimate.saturating_sub(n) < room.reserve.saturating_add(CHECK_EVERY);
        if due
            && let Some(file) = &self.file
            && let Ok((free, _)) = space_of(file)
        {
            room.free = free;
            room.written_since = 0;
        }
        let free = room.free.saturating_sub(room.written_since);
        (free.saturating_sub(n) < room.reserve).then(|| {
            format!(
                "the disk holding the log had {free} bytes free, less than the {} kept free for the ledger (logs.keep_free)",
                room.reserve
            )
        })
    }

    fn drop_output(&mut self, n: u64, why: String) {
        self.room.dropped += n;
        self.room.why.get_or_insert(why);
    }

    /// Notes the output dropped since the last such note, `and` what follows it.
    fn say_dropped(&mut self, and: &str) {
        if self.room.dropped == 0 {
            return;
        }
        let (n, why) = (
            self.room.dropped,
            self.room.why.as_deref().unwrap_or_default(),
        );
        let lead = if self.at_line_start { "" } else { "\n" };
        let line = format!("{lead}[stead: {n} bytes of output dropped: {why}; {and}]\n");
        // Said only once it is written: a log that could not be created is told of by
        // the run's end instead (see `finish`).
        if self.write(line.as_bytes()).is_ok() {
            self.room.dropped = 0;
            self.room.why = None;
        }
    }

    fn write(&mut self, bytes: &[u8]) -> io::Result<()> {
        if bytes.is_empty() {
            return Ok(());
        }
        self.created()?.write_all(bytes)?;
        self.len += bytes.len() as u64;
        self.room.written_since += bytes.len() as u64;
        self.at_line_start = bytes.ends_with(b"\n");
        Ok(())
    }
}

/// Writes a note as the whole log at `path`, when the run ends before its [`Log`] was
/// opened; best effort, and never onto something already there.
pub fn note_at(path: &Path, text: &str) {
    if let Ok(mut file) = create_new(path) {
        let _ = writeln!(file, "[stead: {text}]");
    }
}

fn taken() -> io::Error {
    io::Error::new(
        io::ErrorKind::AlreadyExists,
        "something is already at that path (a file or a link planted there?); \
         stead neither follows nor appends to it",
    )
}

fn make_parent(path: &Path) -> io::Result<()> {
    match path.parent().filter(|d| !d.as_os_str().is_empty()) {
        Some(dir) => DirBuilder::new().recursive(true).mode(0o700).create(dir),
        None => Ok(()),
    }
}

fn create_new(path: &Path) -> io::Result<File> {
    make_parent(path)?;
    OpenOptions::new()
        .append(true)
        .create_new(true)
        .custom_flags(libc::O_NOFOLLOW)
        .mode(0o600)
        .open(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn log_in(dir: &Path) -> (PathBuf, Log) {
        let path = dir.join("runs").join("1.log");
        let log = Log::open(&path, 1024, KeepFree::Bytes(0)).unwrap();
        (path, log)
    }

    #[test]
    fn a_run_that_writes_nothing_leaves_no_file() {
        let tmp = tempfile::tempdir().unwrap();
        let (path, mut log) = log_in(tmp.path());
        assert_eq!(log.finish(), None);
        assert!(!path.exists(), "nothing was written, so no file");
        let dir = std::fs::metadata(path.parent().unwrap()).unwrap();
        assert_eq!(
            std::os::unix::fs::PermissionsExt::mode(&dir.permissions()) & 0o777,
            0o700
        );
    }

    #[test]
    fn the_first_byte_creates_the_file_private_to_the_user() {
        let tmp = tempfile::tempdir().unwrap();
        let (path, mut log) = log_in(tmp.path());
        log.output(0, b"out");
        log.note("done");
        assert_eq!(log.finish(), None);
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "out\n[stead: done]\n"
        );
        let mode = std::fs::metadata(&path).unwrap().permissions();
        assert_eq!(
            std::os::unix::fs::PermissionsExt::mode(&mode) & 0o777,
            0o600
        );
    }

    #[test]
    fn a_path_taken_before_the_start_is_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("runs").join("1.log");
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::os::unix::fs::symlink(tmp.path().join("elsewhere"), &path).unwrap();
        let refused = Log::open(&path, 1024, KeepFree::Bytes(0)).unwrap_err();
        assert_eq!(refused.kind(), io::ErrorKind::AlreadyExists);
        assert!(
            !tmp.path().join("elsewhere").exists(),
            "the link was not followed"
        );
    }

    #[test]
    fn a_path_taken_before_the_first_byte_gets_nothing_and_the_end_says_what_was_lost() {
        let tmp = tempfile::tempdir().unwrap();
        let (path, mut log) = log_in(tmp.path());
        std::fs::write(&path, "planted").unwrap();
        log.output(0, b"secret output");
        log.note("a note");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "planted");
        let lost = log.finish().expect("the loss is told");
        assert!(
            lost.starts_with("13 bytes of output lost: the log could not be created"),
            "{lost}"
        );
    }
}
