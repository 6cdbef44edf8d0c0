//! The lock file `DIR/server.lock.json`: who claims to be the server, and whether a
//! starting server may take over from them.
//!
//! The lock file is a fast path, not the authority: the epoch lease in the ledger is the
//! fence. Its job is to let a starting server tell in microseconds whether the recorded
//! holder is dead (take over without asking), alive and serving (use it), or alive and
//! deaf (take over; the lease decides the rest). Acquisition is serialized by a
//! short-lived `flock` on a separate mutex file, held only while one starter reads,
//! probes and replaces the record, so two starters can never both believe they hold it.
//! The record itself is written with an atomic rename and never held open, so a holder
//! that freezes or dies holds nothing that a successor must wait for.

use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use stead_protocol::Hello;

use crate::system::fsutil;
use stead_client::probe::{self, ProbeOutcome};
use stead_sys::identity::{self, StartIdentity};

/// The schema identifier of the lock record.
pub const LOCK_SCHEMA: &str = "stead.server-lock.v1";

/// How long a starter waits for another starter's acquisition to finish. One
/// acquisition takes at most one probe timeout, so this is generous.
const MUTEX_WAIT: Duration = Duration::from_secs(5);

/// The content of the lock file. Unknown fields are ignored, so a later v1 writer that
/// adds one is still read by this build.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LockRecord {
    pub schema: String,
    pub pid: u32,
    pub start_identity: StartIdentity,
    pub server_id: String,
}

impl LockRecord {
    pub fn new(pid: u32, start_identity: StartIdentity, server_id: String) -> Self {
        Self {
            schema: LOCK_SCHEMA.to_string(),
            pid,
            start_identity,
            server_id,
        }
    }
}

/// What reading the lock file found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LockFile {
    Missing,
    /// Unreadable, not JSON, or another schema: treated as stale.
    Corrupt(String),
    Held(LockRecord),
}

/// The takeover decision.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Replace the record. `probed` says whether the holder had to be asked.
    TakeOver { probed: bool, why: TakeOverReason },
    /// A live holder answered hello: use it.
    AlreadyServing { holder: LockRecord, hello: Hello },
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TakeOverReason {
    NoLock,
    CorruptLock(String),
    HolderDead,
    HolderNotServing(String),
}

/// Decides whether to take over, given the lock file, a liveness check and a probe.
/// The probe runs only for a live holder: a missing lock, a corrupt one, or a holder
/// whose start identity no longer matches is taken over without asking anyone.
pub fn decide(
    lock: &LockFile,
    alive: impl FnOnce(&LockRecord) -> bool,
    probe: impl FnOnce(&LockRecord) -> ProbeOutcome,
) -> Verdict {
    let holder = match lock {
        LockFile::Missing => {
            return Verdict::TakeOver {
                probed: false,
                why: TakeOverReason::NoLock,
            };
        }
        LockFile::Corrupt(why) => {
            return Verdict::TakeOver {
                probed: false,
                why: TakeOverReason::CorruptLock(why.clone()),
            };
        }
        LockFile::Held(holder) => holder,
    };
    if !alive(holder) {
        return Verdict::TakeOver {
            probed: false,
            why: TakeOverReason::HolderDead,
        };
    }
    match probe(holder) {
        ProbeOutcome::Serving(hello) => Verdict::AlreadyServing {
            holder: holder.clone(),
            hello,
        },
        ProbeOutcome::NotServing(why) => Verdict::TakeOver {
            probed: true,
            why: TakeOverReason::HolderNotServing(why.to_string()),
        },
    }
}

/// Reads the lock file; any failure other than absence reads as [`LockFile::Corrupt`].
pub fn read(path: &Path) -> LockFile {
    match std::fs::read(path) {
        Ok(bytes) => match serde_json::from_slice::<LockRecord>(&bytes) {
            Ok(record) if record.schema == LOCK_SCHEMA => LockFile::Held(record),
            Ok(record) => LockFile::Corrupt(format!("unknown schema {:?}", record.schema)),
            Err(e) => LockFile::Corrupt(format!("not a lock record: {e}")),
        },
        Err(e) if e.kind() == io::ErrorKind::NotFound => LockFile::Missing,
        Err(e) => LockFile::Corrupt(format!("unreadable: {e}")),
    }
}

#[derive(Debug, thiserror::Error)]
pub enum LockError {
    #[error("failed to open lock mutex {path}: {source}")]
    Mutex { path: PathBuf, source: io::Error },
    #[error(
        "another stead server has been starting in this state directory for over {}s (lock mutex {path} is held)",
        MUTEX_WAIT.as_secs()
    )]
    MutexBusy { path: PathBuf },
    #[error("failed to write lock file {path}: {source}")]
    Write { path: PathBuf, source: io::Error },
}

/// The result of [`acquire`].
#[derive(Debug)]
pub enum Acquired {
    /// This process now holds the lock file.
    Held { verdict: Verdict },
    /// A live holder is serving.
    AlreadyServing { holder: LockRecord, hello: Hello },
}

/// The lock file's place and the mutex that serializes writers.
#[derive(Debug, Clone)]
pub struct LockPaths {
    pub lock: PathBuf,
    pub mutex: PathBuf,
    pub socket: PathBuf,
}

/// Takes the lock for `record` unless a live holder is serving on `socket`.
pub fn acquire(
    paths: &LockPaths,
    record: &LockRecord,
    probe_timeout: Duration,
) -> Result<Acquired, LockError> {
    let _mutex = MutexGuard::lock(&paths.mutex)?;
    let current = read(&paths.lock);
    let verdict = decide(
        &current,
        |holder| identity::is_alive(holder.pid, &holder.start_identity),
        |_| probe::probe(&paths.socket, probe_timeout),
    );
    match verdict {
        Verdict::AlreadyServing { holder, hello } => Ok(Acquired::AlreadyServing { holder, hello }),
        verdict @ Verdict::TakeOver { .. } => {
            write(&paths.lock, record)?;
            Ok(Acquired::Held { verdict })
        }
    }
}

/// Rewrites the record when the lock file no longer names a live holder (a starter that
/// lost the lease race may have replaced it and exited). A live other holder is left
/// alone: it is mid-start and will find the lease taken. `still_ours` is asked under the
/// mutex, so a server that has begun to stop (and to release) never writes it back.
/// Returns whether it rewrote.
pub fn reassert(
    paths: &LockPaths,
    record: &LockRecord,
    still_ours: impl FnOnce() -> bool,
) -> Result<bool, LockError> {
    let _mutex = MutexGuard::lock(&paths.mutex)?;
    if !still_ours() {
        return Ok(false);
    }
    match read(&paths.lock) {
        LockFile::Held(holder) if holder == *record => Ok(false),
        LockFile::Held(holder) if identity::is_alive(holder.pid, &holder.start_identity) => {
            Ok(false)
        }
        _ => write(&paths.lock, record).map(|()| true),
    }
}

/// Removes the lock file if it still names `record`; a successor's record is left alone.
pub fn release(paths: &LockPaths, record: &LockRecord) -> Result<bool, LockError> {
    let _mutex = MutexGuard::lock(&paths.mutex)?;
    match read(&paths.lock) {
        LockFile::Held(holder) if holder == *record => {
            std::fs::remove_file(&paths.lock).map_err(|source| LockError::Write {
                path: paths.lock.clone(),
                source,
            })?;
            Ok(true)
        }
        _ => Ok(false),
    }
}

fn write(path: &Path, record: &LockRecord) -> Result<(), LockError> {
    let mut bytes = serde_json::to_vec_pretty(record).expect("a lock record always serializes");
    bytes.push(b'\n');
    fsutil::write_atomic(path, &bytes, 0o600).map_err(|source| LockError::Write {
        path: path.to_path_buf(),
        source,
    })
}

/// An exclusive `flock` on the mutex file, released on drop (and by the kernel if the
/// holder dies, so a crashed starter never wedges the next one).
struct MutexGuard(File);

impl MutexGuard {
    fn lock(path: &Path) -> Result<Self, LockError> {
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .mode(0o600)
            .open(path)
            .map_err(|source| LockError::Mutex {
                path: path.to_path_buf(),
                source,
            })?;
        let deadline = Instant::now() + MUTEX_WAIT;
        loop {
            match file.try_lock() {
                Ok(()) => return Ok(Self(file)),
                Err(std::fs::TryLockError::WouldBlock) if Instant::now() < deadline => {
                    // Another starter is mid-acquisition (at most one probe long).
                    std::thread::sleep(Duration::from_millis(5));
                }
                Err(std::fs::TryLockError::WouldBlock) => {
                    return Err(LockError::MutexBusy {
                        path: path.to_path_buf(),
                    });
                }
                Err(std::fs::TryLockError::Error(source)) => {
                    return Err(LockError::Mutex {
                        path: path.to_path_buf(),
                        source,
                    });
                }
            }
        }
    }
}

impl Drop for MutexGuard {
    fn drop(&mut self) {
        let _ = self.0.unlock();
    }
}

#[cfg(test)]
mod tests {
    use std::cell::Cell;

    use super::*;
    use stead_client::probe::NotServing;

    fn record(pid: u32) -> LockRecord {
        LockRecord::new(
            pid,
            StartIdentity::from_stored("linux:b:1"),
            "srv-a".to_string(),
        )
    }

    fn hello() -> Hello {
        Hello {
            protocol: stead_protocol::PROTOCOL.into(),
            server_id: "srv-a".into(),
            epoch: 3,
            pid: 10,
            version: "0".into(),
        }
    }

    fn no_probe(_: &LockRecord) -> ProbeOutcome {
        panic!("must not probe")
    }

    #[test]
    fn missing_lock_takes_over_without_probing() {
        let v = decide(
            &LockFile::Missing,
            |_| panic!("no liveness check"),
            no_probe,
        );
        assert_eq!(
            v,
            Verdict::TakeOver {
                probed: false,
                why: TakeOverReason::NoLock
            }
        );
    }

    #[test]
    fn dead_holder_is_taken_over_without_probing() {
        let v = decide(&LockFile::Held(record(10)), |_| false, no_probe);
        assert_eq!(
            v,
            Verdict::TakeOver {
                probed: false,
                why: TakeOverReason::HolderDead
            }
        );
    }

    #[test]
    fn corrupt_lock_is_stale() {
        let v = decide(
            &LockFile::Corrupt("not json".into()),
            |_| panic!("no liveness check"),
            no_probe,
        );
        assert!(matches!(
            v,
            Verdict::TakeOver {
                probed: false,
                why: TakeOverReason::CorruptLock(_)
            }
        ));
    }

    #[test]
    fn serving_holder_is_already_serving() {
        let probed = Cell::new(false);
        let v = decide(
            &LockFile::Held(record(10)),
            |_| true,
            |_| {
                probed.set(true);
                ProbeOutcome::Serving(hello())
            },
        );
        assert!(probed.get());
        assert_eq!(
            v,
            Verdict::AlreadyServing {
                holder: record(10),
                hello: hello()
            }
        );
    }

    #[test]
    fn deaf_holder_is_taken_over_after_probing() {
        let v = decide(
            &LockFile::Held(record(10)),
            |_| true,
            |_| ProbeOutcome::NotServing(NotServing::Silent),
        );
        assert!(matches!(
            v,
            Verdict::TakeOver {
                probed: true,
                why: TakeOverReason::HolderNotServing(_)
            }
        ));
    }

    #[test]
    fn read_tells_missing_corrupt_and_held_apart() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("server.lock.json");
        assert_eq!(read(&path), LockFile::Missing);
        std::fs::write(&path, b"{garbage").unwrap();
        assert!(matches!(read(&path), LockFile::Corrupt(_)));
        std::fs::write(
            &path,
            br#"{"schema":"other.v9","pid":1,"start_identity":"x","server_id":"y"}"#,
        )
        .unwrap();
        assert!(matches!(read(&path), LockFile::Corrupt(m) if m.contains("other.v9")));
        write(&path, &record(10)).unwrap();
        assert_eq!(read(&path), LockFile::Held(record(10)));
    }

    #[test]
    fn acquire_release_and_reassert_respect_other_holders() {
        let dir = tempfile::tempdir().unwrap();
        let paths = LockPaths {
            lock: dir.path().join("server.lock.json"),
            mutex: dir.path().join("server.lock.mutex"),
            socket: dir.path().join("stead.sock"),
        };
        let me = LockRecord::new(
            std::process::id(),
            identity::current().unwrap(),
            "me".into(),
        );
        // A record naming a dead process (pid of an exited, reaped child).
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let dead_pid = child.id();
        child.wait().unwrap();
        let dead = LockRecord::new(
            dead_pid,
            StartIdentity::from_stored("linux:gone:1"),
            "old".into(),
        );
        write(&paths.lock, &dead).unwrap();
        let got = acquire(&paths, &me, Duration::from_millis(100)).unwrap();
        assert!(matches!(
            got,
            Acquired::Held {
                verdict: Verdict::TakeOver {
                    probed: false,
                    why: TakeOverReason::HolderDead
                }
            }
        ));
        assert_eq!(read(&paths.lock), LockFile::Held(me.clone()));
        let mode = std::fs::metadata(&paths.lock).unwrap().permissions();
        assert_eq!(
            std::os::unix::fs::PermissionsExt::mode(&mode) & 0o777,
            0o600
        );

        // Release leaves a successor's record alone.
        write(&paths.lock, &dead).unwrap();
        assert!(!release(&paths, &me).unwrap());
        assert_eq!(read(&paths.lock), LockFile::Held(dead.clone()));
        // Reassert replaces a dead holder's record with ours.
        assert!(!reassert(&paths, &me, || false).unwrap());
        assert!(reassert(&paths, &me, || true).unwrap());
        assert!(!reassert(&paths, &me, || true).unwrap());
        assert!(release(&paths, &me).unwrap());
        assert_eq!(read(&paths.lock), LockFile::Missing);
    }
}
