//! Becoming the server: lock file, then lease, then socket.
//!
//! The order matters. The lock file says who claims the directory and lets a starter
//! skip a dead holder without asking; the lease in the ledger is the fence that decides;
//! only a starter holding both may unlink a stale socket file and bind its own. A starter
//! that loses the lease race leaves the socket alone, so a live server keeps serving.

use std::io;
use std::os::unix::fs::MetadataExt;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use stead_protocol::Hello;
use tracing::{info, warn};

use crate::system::lock::{self, Acquired, LockPaths, LockRecord, TakeOverReason, Verdict};
use stead_client::config::Config;
use stead_client::paths::StatePaths;
use stead_client::probe::{self, ProbeOutcome};
use stead_core::clock::{SharedClock, rfc3339};
use stead_core::lease::{self, ClaimOutcome, Claimant, HeldLease, LeaseRow};
use stead_store::{Store, StoreError};
use stead_sys::identity::{self, StartIdentity};

/// How often a starter re-tries a lease held by a holder that is shutting down or whose
/// expiry is near.
const CLAIM_RETRY: Duration = Duration::from_millis(50);

#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error("failed to read this process's start identity: {0}")]
    Identity(io::Error),
    #[error(transparent)]
    Lock(#[from] lock::LockError),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(
        "a live stead server (pid {pid}, server {server_id}) owns epoch {epoch} of this ledger until {until}; \
         it did not answer on the socket, so it may be frozen or overloaded. stead does not take over a live lease: \
         retry after that time, or stop that process"
    )]
    LeaseHeld {
        pid: u32,
        server_id: String,
        epoch: i64,
        until: String,
    },
    #[error("failed to bind socket {path}: {source}")]
    Bind { path: PathBuf, source: io::Error },
    #[error(
        "failed to listen for HTTP on {addr}: {cause}; choose another address ([http] listen in config.toml, or --http)"
    )]
    HttpBind {
        addr: std::net::SocketAddr,
        cause: io::Error,
    },
    #[error("failed to read or create the HTTP token {path}: {cause}")]
    HttpToken { path: PathBuf, cause: io::Error },
    #[error(
        "[http] listen asks for the HTTP API on {addr}, but this stead was built without it \
         (cargo feature `http`); remove the setting or use a build with the API"
    )]
    HttpUnsupported { addr: std::net::SocketAddr },
}

/// A server that holds the lock, the lease and the bound socket.
#[derive(Debug)]
pub struct Started {
    pub held: Held,
    pub listener: std::os::unix::net::UnixListener,
    /// The HTTP API's listener and token, when the config asks for them.
    pub http: Option<(std::net::TcpListener, String)>,
}

/// What a started server holds and must give back on its way out.
#[derive(Debug)]
pub struct Held {
    pub lease: HeldLease,
    pub lock_record: LockRecord,
    pub lock_paths: LockPaths,
    /// Device and inode of the socket file we bound, so shutdown never unlinks a
    /// successor's socket at the same path.
    pub socket_inode: (u64, u64),
    pub start_identity: StartIdentity,
}

/// The outcome of trying to become the server.
#[derive(Debug)]
pub enum Startup {
    Started(Box<Started>),
    AlreadyServing { holder: LockRecord, hello: Hello },
}

/// Lock, lease, socket, within the configured start timeout.
pub fn start(
    paths: &StatePaths,
    config: &Config,
    store: &Arc<dyn Store>,
    clock: &SharedClock,
    server_id: &str,
) -> Result<Startup, StartError> {
    let deadline = Instant::now() + config.timings.start_timeout;
    let pid = std::process::id();
    let start_identity = identity::current().map_err(StartError::Identity)?;
    let lock_paths = LockPaths {
        lock: paths.lock_file(),
        mutex: paths.lock_mutex(),
        socket: paths.socket().to_path_buf(),
    };
    let record = LockRecord::new(pid, start_identity.clone(), server_id.to_string());
    match lock::acquire(&lock_paths, &record, config.timings.probe_timeout)? {
        Acquired::AlreadyServing { holder, hello } => {
            return Ok(Startup::AlreadyServing { holder, hello });
        }
        Acquired::Held { verdict } => log_takeover(&verdict),
    }

    let claimant = Claimant::new(server_id.to_string(), pid, start_identity.clone());
    let lease = match claim(store, clock, config, &claimant, paths, deadline) {
        Ok(Claim::Won(lease)) => lease,
        Ok(Claim::Serving(hello)) => {
            let _ = lock::release(&lock_paths, &record);
            info!(server_id = %hello.server_id, pid = hello.pid, "another server began serving while this one waited; leaving it be");
            let holder = LockRecord::new(
                hello.pid,
                StartIdentity::from_stored("unknown"),
                hello.server_id.clone(),
            );
            return Ok(Startup::AlreadyServing { holder, hello });
        }
        Err(e) => {
            // Leave no record of ours behind for the next starter to probe.
            let _ = lock::release(&lock_paths, &record);
            return Err(e);
        }
    };
    info!(
        epoch = lease.epoch,
        expires_at = %rfc3339(lease.expires_at),
        "claimed the lease"
    );

    // Bound while holding the lease, so a losing starter never takes the port, and before
    // the socket, so a server that cannot listen where it was told never serves at all.
    let bound = config
        .http
        .listen
        .map(|addr| {
            if !crate::request::web::SUPPORTED {
                return Err(StartError::HttpUnsupported { addr });
            }
            let listener = std::net::TcpListener::bind(addr)
                .map_err(|cause| StartError::HttpBind { addr, cause })?;
            let path = paths.http_token();
            let token = crate::request::web::load_or_create_token(&path)
                .map_err(|cause| StartError::HttpToken { path, cause })?;
            Ok((listener, token))
        })
        .transpose()
        .and_then(|http| Ok((http, bind(paths)?)));
    let (http, (listener, socket_inode)) = match bound {
        Ok(bound) => bound,
        Err(e) => {
            let _ = store.release_lease(&lease, clock.now());
            let _ = lock::release(&lock_paths, &record);
            return Err(e);
        }
    };
    Ok(Startup::Started(Box::new(Started {
        held: Held {
            lease,
            lock_record: record,
            lock_paths,
            socket_inode,
            start_identity,
        },
        listener,
        http,
    })))
}

fn log_takeover(verdict: &Verdict) {
    match verdict {
        Verdict::TakeOver { why, .. } => match why {
            TakeOverReason::NoLock => {}
            TakeOverReason::CorruptLock(detail) => {
                warn!(%detail, "the lock file was unreadable; treating it as stale")
            }
            TakeOverReason::HolderDead => info!("the lock holder is gone; taking over"),
            TakeOverReason::HolderNotServing(detail) => {
                warn!(
                    "the lock holder is alive but not serving ({detail}); taking over the lock, the lease decides"
                )
            }
        },
        Verdict::AlreadyServing { .. } => {}
    }
}

/// How a wait for the lease ended.
enum Claim {
    Won(HeldLease),
    /// While we waited, a server began serving on the socket: use it instead.
    Serving(Hello),
}

/// Claims the lease, waiting while a live holder's lease runs out or the holder
/// releases it on its way down, until `deadline`. Between tries it probes the socket
/// again: the holder may have been a starter between its claim and its bind.
fn claim(
    store: &Arc<dyn Store>,
    clock: &SharedClock,
    config: &Config,
    claimant: &Claimant,
    paths: &StatePaths,
    deadline: Instant,
) -> Result<Claim, StartError> {
    let ttl = stead_core::clock::span(config.timings.lease);
    let mut logged = false;
    let mut dead_owner: Option<LeaseRow> = None;
    loop {
        match store.claim_lease(claimant, clock.now(), ttl, dead_owner.as_ref())? {
            ClaimOutcome::Claimed(lease) => {
                if dead_owner.is_some() {
                    info!("took over the unexpired lease of a server that died");
                }
                return Ok(Claim::Won(lease));
            }
            ClaimOutcome::Held(row) if lease::owner_is_dead(&row) => {
                // A crashed owner can write nothing more: take its row over now instead
                // of waiting out its expiry, matching the row exactly as judged.
                dead_owner = Some(row);
            }
            ClaimOutcome::Held(row) => {
                dead_owner = None;
                if let ProbeOutcome::Serving(hello) =
                    probe::probe(paths.socket(), config.timings.probe_timeout)
                {
                    return Ok(Claim::Serving(hello));
                }
                if !logged {
                    let owner = row.owner.as_ref().expect("a held lease has an owner");
                    warn!(
                        "waiting for the lease of live server {} (pid {}, epoch {}), valid until {}: it does not answer on the socket, so it may be frozen, asleep or still starting",
                        owner.server_id,
                        owner.pid,
                        row.epoch,
                        rfc3339(row.expires_at)
                    );
                    logged = true;
                }
                if Instant::now() + CLAIM_RETRY >= deadline {
                    return Err(held_error(row));
                }
                std::thread::sleep(CLAIM_RETRY);
            }
        }
    }
}

fn held_error(row: LeaseRow) -> StartError {
    let owner = row.owner.expect("a held lease has an owner");
    StartError::LeaseHeld {
        pid: owner.pid,
        server_id: owner.server_id,
        epoch: row.epoch,
        until: rfc3339(row.expires_at),
    }
}

/// Binds the socket (0600), replacing a stale socket file. Only called while holding the
/// lock and the lease, so a stale file cannot belong to a live server.
pub(super) fn bind(
    paths: &StatePaths,
) -> Result<(std::os::unix::net::UnixListener, (u64, u64)), StartError> {
    let path = paths.socket();
    let err = |source| StartError::Bind {
        path: path.to_path_buf(),
        source,
    };
    paths.prepare_socket_dir().map_err(err)?;
    match std::fs::remove_file(path) {
        Ok(()) => info!(socket = %path.display(), "removed a stale socket file"),
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        Err(e) => return Err(err(e)),
    }
    // Bind under a private umask so the socket is never reachable by others, not even
    // for the instant before a chmod.
    let old = rustix::process::umask(rustix::fs::Mode::from_raw_mode(0o177));
    let bound = std::os::unix::net::UnixListener::bind(path);
    rustix::process::umask(old);
    let listener = bound.map_err(err)?;
    let meta = std::fs::symlink_metadata(path).map_err(err)?;
    Ok((listener, (meta.dev(), meta.ino())))
}
