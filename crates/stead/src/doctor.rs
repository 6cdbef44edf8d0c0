//! `stead doctor`: a read-only diagnosis of a state directory.
//!
//! Each check reads what is on disk (the lock file, the lease row, the socket, the
//! ledger) without starting a server or writing anything, says in plain words what it
//! found, and, for anything amiss, what to do about it.

use std::os::unix::fs::{FileTypeExt, MetadataExt, PermissionsExt};

use serde::Serialize;

use jiff::Timestamp;
use stead_client::config::Config;
use stead_client::paths::StatePaths;
use stead_client::probe::{self, ProbeOutcome};
use stead_core::clock::{SharedClock, rfc3339};
use stead_core::lease::LeaseRow;
#[cfg(not(feature = "postgres"))]
use stead_core::locator::StoreLocator;
use stead_protocol::DiskSpace;
#[cfg(feature = "postgres")]
use stead_protocol::limits::CLOCK_SKEW_WARN_MS;
use stead_server::system::lock::{self, LockFile};
#[cfg(feature = "postgres")]
use stead_store::postgres::PgStore;
use stead_store::sqlite;
use stead_sys::identity;

/// How a check came out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Health {
    Ok,
    /// Not how things should stay, but stead recovers by itself.
    Warning,
    /// Needs a person.
    Problem,
}

/// One check's finding.
#[derive(Debug, Clone, Serialize)]
pub struct Check {
    pub name: &'static str,
    pub health: Health,
    pub summary: String,
    /// What to do, when anything needs doing.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fix: Option<String>,
}

/// The whole diagnosis.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub state_dir: String,
    pub socket: String,
    /// The worst health of any check.
    pub health: Health,
    pub checks: Vec<Check>,
}

fn check(name: &'static str, health: Health, summary: String, fix: Option<String>) -> Check {
    Check {
        name,
        health,
        summary,
        fix,
    }
}

/// Runs every check.
pub fn diagnose(paths: &StatePaths, config: &Config, clock: &SharedClock) -> Report {
    let ledger = match &config.store_url {
        Some(url) => shared_ledger_checks(url),
        None => {
            let (ledger, lease) = ledger_checks(paths, clock);
            vec![lease, ledger]
        }
    };
    let mut checks = vec![
        state_dir_check(paths),
        disk_check(paths, config),
        lock_check(paths),
        secrets_check(paths),
    ];
    let mut ledger = ledger.into_iter();
    checks.extend(ledger.next());
    checks.push(socket_check(paths, config));
    checks.extend(ledger);
    checks.push(sleep_inhibitor_check());
    Report {
        state_dir: paths.dir().display().to_string(),
        socket: paths.socket().display().to_string(),
        health: checks.iter().map(|c| c.health).max().unwrap_or(Health::Ok),
        checks,
    }
}

/// Whether a run of a `keep_awake` job can hold a sleep inhibitor here. None is no
/// fault of the directory's (those runs go on, and their logs say the machine may sleep
/// under them), so the check is never worse than ok; it says what a run would meet.
fn sleep_inhibitor_check() -> Check {
    match stead_sys::inhibit::available() {
        Ok(()) => check(
            "sleep_inhibitor",
            Health::Ok,
            "a sleep inhibitor can be had: runs of keep_awake jobs keep the machine awake".into(),
            None,
        ),
        Err(why) => check(
            "sleep_inhibitor",
            Health::Ok,
            format!("{why}: runs of keep_awake jobs go on, and the machine may sleep under them"),
            Some(
                "run stead where logind (systemd-logind) manages the session, or keep the \
                 machine awake another way while such jobs run"
                    .into(),
            ),
        ),
    }
}

/// Room on the disk holding the state directory (its ledger and logs, by default).
fn disk_check(paths: &StatePaths, config: &Config) -> Check {
    let disk = stead_sys::disk::space(paths.dir())
        .map(|(free, total)| DiskSpace::new(free, total, config.logs.keep_free));
    let Ok(disk) = disk else {
        return check(
            "disk",
            Health::Warning,
            format!(
                "cannot tell how full the disk holding {} is",
                paths.dir().display()
            ),
            None,
        );
    };
    match crate::cli::render::disk_warning(&disk) {
        None => check(
            "disk",
            Health::Ok,
            format!(
                "{} free of {}; run output stops below {} (logs.keep_free)",
                crate::cli::render::bytes(disk.free_bytes),
                crate::cli::render::bytes(disk.total_bytes),
                crate::cli::render::bytes(disk.reserve_bytes)
            ),
            None,
        ),
        Some(warning) => check(
            "disk",
            if disk.below_reserve() {
                Health::Problem
            } else {
                Health::Warning
            },
            warning,
            Some(format!(
                "free space on the disk holding {} (`du -sh {}/logs` shows what run logs take)",
                paths.dir().display(),
                paths.dir().display()
            )),
        ),
    }
}

fn state_dir_check(paths: &StatePaths) -> Check {
    let mode = std::fs::metadata(paths.dir()).map(|m| m.permissions().mode() & 0o777);
    match mode {
        Ok(0o700) => check(
            "state_dir",
            Health::Ok,
            format!("{} is private to you (0700)", paths.dir().display()),
            None,
        ),
        Ok(mode) => check(
            "state_dir",
            Health::Warning,
            format!(
                "{} has mode {mode:o}; others may read the ledger and logs",
                paths.dir().display()
            ),
            Some(format!("chmod 700 {}", paths.dir().display())),
        ),
        Err(e) => check(
            "state_dir",
            Health::Problem,
            format!("cannot read {}: {e}", paths.dir().display()),
            Some("check the directory's ownership and permissions".into()),
        ),
    }
}

/// The secret store: when there is one, it must be the user's own and theirs alone, or
/// runs that need a secret fail to start.
fn secrets_check(paths: &StatePaths) -> Check {
    let store = paths.secrets();
    let path = store.path().display();
    match store.check_private() {
        Ok(false) => check(
            "secrets",
            Health::Ok,
            format!("no secret store ({path}): no secrets are set on this host"),
            None,
        ),
        Ok(true) => check(
            "secrets",
            Health::Ok,
            format!("{path} is yours and private to you (0600)"),
            None,
        ),
        Err(e) => {
            let fix = match &e {
                stead_client::secrets::SecretError::Mode { .. } => format!("chmod 600 {path}"),
                stead_client::secrets::SecretError::NotOwned { .. } => format!(
                    "remove {path} (its values may be known to its owner) and set the secrets again with `stead secret set NAME`"
                ),
                _ => "check the file's ownership and permissions".to_string(),
            };
            check(
                "secrets",
                Health::Problem,
                format!("{e}; runs that need a secret fail to start"),
                Some(fix),
            )
        }
    }
}

fn lock_check(paths: &StatePaths) -> Check {
    let path = paths.lock_file();
    match lock::read(&path) {
        LockFile::Missing => check(
            "lock_file",
            Health::Ok,
            "no lock file: no server claims this directory".into(),
            None,
        ),
        LockFile::Corrupt(why) => check(
            "lock_file",
            Health::Warning,
            format!("{} is unreadable ({why})", path.display()),
            Some("nothing to do: the next server start treats it as stale and replaces it".into()),
        ),
        LockFile::Held(record) if identity::is_alive(record.pid, &record.start_identity) => check(
            "lock_file",
            Health::Ok,
            format!(
                "held by live process {} (server {})",
                record.pid, record.server_id
            ),
            None,
        ),
        LockFile::Held(record) => check(
            "lock_file",
            Health::Warning,
            format!(
                "names process {} (server {}), which is gone",
                record.pid, record.server_id
            ),
            Some(
                "nothing to do: the next command starts a server, which takes over without asking"
                    .into(),
            ),
        ),
    }
}

fn ledger_checks(paths: &StatePaths, clock: &SharedClock) -> (Check, Check) {
    let path = paths.ledger();
    if !path.exists() {
        return (
            check(
                "ledger",
                Health::Ok,
                format!(
                    "no ledger yet at {}: the first server creates it",
                    path.display()
                ),
                None,
            ),
            check("lease", Health::Ok, "no lease row yet".into(), None),
        );
    }
    let ledger = match sqlite::check_integrity(&path) {
        Ok(report) if report.problems.is_empty() => check(
            "ledger",
            Health::Ok,
            format!(
                "{} passes SQLite's integrity check (schema {}, journal {})",
                path.display(),
                report.schema_version,
                report.journal_mode
            ),
            None,
        ),
        Ok(report) => check(
            "ledger",
            Health::Problem,
            format!(
                "{} fails SQLite's integrity check: {}",
                path.display(),
                report.problems.join("; ")
            ),
            Some(format!(
                "stop stead, copy {} aside, and run `sqlite3 {} .recover` into a new file",
                path.display(),
                path.display()
            )),
        ),
        Err(e) => check(
            "ledger",
            Health::Problem,
            e.to_string(),
            Some(format!(
                "move the file aside (mv {0} {0}.broken); the next start creates a fresh ledger",
                path.display()
            )),
        ),
    };
    let lease = match sqlite::read_lease_readonly(&path) {
        Ok(row) => lease_check(&row, clock.now()),
        Err(e) => check(
            "lease",
            Health::Problem,
            format!("cannot read the lease row: {e}"),
            None,
        ),
    };
    (ledger, lease)
}

/// A build without PostgreSQL cannot look at a shared ledger.
#[cfg(not(feature = "postgres"))]
fn shared_ledger_checks(url: &str) -> Vec<Check> {
    let error = stead_store::open(
        &StoreLocator::Postgres {
            url: url.to_string(),
        },
        "",
        std::time::Duration::ZERO,
    )
    .err()
    .map_or_else(
        || "cannot open a PostgreSQL ledger".into(),
        |e| e.to_string(),
    );
    vec![check("ledger", Health::Problem, error, None)]
}

/// A PostgreSQL ledger: reachable, migrated, this host's lease row, and how far this
/// host's clock is from the database's. Read only: the session is read-only, nothing is
/// migrated and no row is touched (a diagnosis must not write).
#[cfg(feature = "postgres")]
fn shared_ledger_checks(url: &str) -> Vec<Check> {
    let where_ = stead_protocol::redact_url(url);
    let inspected = stead_sys::machine::machine_id()
        .map_err(|e| format!("cannot read this machine's id: {e}"))
        .and_then(|machine| PgStore::inspect(url, &machine).map_err(|e| e.to_string()));
    let found = match inspected {
        Ok(found) => found,
        Err(e) => {
            return vec![
                check(
                    "ledger",
                    Health::Problem,
                    e,
                    Some(format!(
                        "check that PostgreSQL runs and {where_} accepts this user (`psql '{where_}'`); runs in flight go on meanwhile"
                    )),
                ),
                check(
                    "lease",
                    Health::Warning,
                    "unknown while the ledger is unreachable".into(),
                    None,
                ),
            ];
        }
    };
    let ledger = if found.schema == found.known {
        check(
            "ledger",
            Health::Ok,
            format!(
                "the shared PostgreSQL ledger {where_} answers (schema version {})",
                found.schema
            ),
            None,
        )
    } else if found.schema < found.known {
        check(
            "ledger",
            Health::Warning,
            format!(
                "the shared PostgreSQL ledger {where_} answers at schema version {} (this stead writes {})",
                found.schema, found.known
            ),
            Some("nothing to do: the next server to start migrates it".into()),
        )
    } else {
        check(
            "ledger",
            Health::Problem,
            format!(
                "the shared PostgreSQL ledger {where_} has schema version {}, newer than this stead's {}",
                found.schema, found.known
            ),
            Some("upgrade stead on this host".into()),
        )
    };
    // The lease is judged by the database's clock, as every host's server judges it.
    let lease = match &found.lease {
        Some(row) => lease_check(row, found.ledger_time),
        None => check(
            "lease",
            Health::Ok,
            "never claimed: the ledger has no schema yet".into(),
            None,
        ),
    };
    // This host's clock minus the database's.
    let offset = -stead_core::clock::ledger_offset(
        found.local_sent,
        found.ledger_time,
        found.local_received,
    );
    let offset_ms = i64::try_from(offset.as_millis()).unwrap_or(i64::MAX);
    let clock = if offset_ms.abs() > CLOCK_SKEW_WARN_MS {
        check(
            "clock",
            Health::Warning,
            format!(
                "this host's clock is {}",
                crate::cli::render::clock_skew(offset_ms)
            ),
            Some("leases and fires follow the database's clock, so nothing is cut or doubled; set the clock right (NTP: `timedatectl set-ntp true`) so the times this host shows agree".into()),
        )
    } else {
        check(
            "clock",
            Health::Ok,
            format!("within {CLOCK_SKEW_WARN_MS} ms of the database's ({offset_ms:+} ms)"),
            None,
        )
    };
    vec![lease, ledger, clock]
}

fn lease_check(row: &LeaseRow, now: Timestamp) -> Check {
    let Some(owner) = &row.owner else {
        return check(
            "lease",
            Health::Ok,
            format!("released (epoch {}): no server owns the ledger", row.epoch),
            None,
        );
    };
    let alive = identity::is_alive(owner.pid, &owner.start_identity);
    let expired = row.expires_at <= now;
    let until = rfc3339(row.expires_at);
    match (alive, expired) {
        (true, false) => check(
            "lease",
            Health::Ok,
            format!(
                "epoch {} held by server {} (pid {}) until {until}",
                row.epoch, owner.server_id, owner.pid
            ),
            None,
        ),
        (true, true) => check(
            "lease",
            Health::Warning,
            format!(
                "epoch {} of server {} (pid {}) expired at {until} while its process lives: it is asleep, frozen or wedged",
                row.epoch, owner.server_id, owner.pid
            ),
            Some(format!(
                "if it is frozen (state T in `ps -o stat= -p {0}`), `kill -CONT {0}` resumes it and it re-arms its lease; a new server may take over meanwhile",
                owner.pid
            )),
        ),
        (false, _) => check(
            "lease",
            Health::Warning,
            format!(
                "epoch {} names server {} (pid {}), which is gone",
                row.epoch, owner.server_id, owner.pid
            ),
            Some("nothing to do: the next server takes over a dead owner's lease at once".into()),
        ),
    }
}

fn socket_check(paths: &StatePaths, config: &Config) -> Check {
    let socket = paths.socket();
    let meta = match std::fs::symlink_metadata(socket) {
        Ok(meta) => meta,
        Err(_) => {
            return check(
                "socket",
                Health::Ok,
                format!(
                    "no socket at {}: no server is running; the next command starts one",
                    socket.display()
                ),
                None,
            );
        }
    };
    if !meta.file_type().is_socket() {
        return check(
            "socket",
            Health::Problem,
            format!("{} exists but is not a socket", socket.display()),
            Some(format!(
                "remove it (rm {}) after checking what it is",
                socket.display()
            )),
        );
    }
    if meta.uid() != rustix::process::getuid().as_raw() {
        return check(
            "socket",
            Health::Problem,
            format!(
                "{} belongs to uid {}, not to you",
                socket.display(),
                meta.uid()
            ),
            Some("remove it as its owner or root".into()),
        );
    }
    match probe::probe(socket, config.timings.probe_timeout) {
        ProbeOutcome::Serving(hello) => {
            let mode = meta.permissions().mode() & 0o777;
            if mode & 0o077 != 0 {
                return check(
                    "socket",
                    Health::Warning,
                    format!(
                        "serving (server {}, pid {}) but the socket has mode {mode:o}",
                        hello.server_id, hello.pid
                    ),
                    Some(format!("chmod 600 {}", socket.display())),
                );
            }
            check(
                "socket",
                Health::Ok,
                format!(
                    "serving: server {} (pid {}, epoch {}, version {})",
                    hello.server_id, hello.pid, hello.epoch, hello.version
                ),
                None,
            )
        }
        ProbeOutcome::NotServing(why) => check(
            "socket",
            Health::Warning,
            format!("{} is not serving: {why}", socket.display()),
            Some(
                "nothing to do: the next command starts a server, which replaces a stale socket; \
                 if a server process is frozen, the lease check above names it"
                    .into(),
            ),
        ),
    }
}
