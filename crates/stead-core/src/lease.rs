//! The epoch lease: the authority on which server owns a state directory.
//!
//! One row in the ledger holds the epoch, the owner's server id, a hash of its secret
//! token, its pid and start identity, and an expiry. The rules:
//!
//! - **claim** takes over only a released or expired row, or the row of an owner proven
//!   dead (its pid and start identity no longer match a live process), and bumps the
//!   epoch;
//! - **renew** matches epoch, server id, token, pid and start identity, but *not* expiry:
//!   expiry answers "may someone else take over now", never "is the owner alive", so an
//!   owner that slept past its expiry re-arms its own lease;
//! - **release** clears the owner, so a successor can claim at once;
//! - a renewal that finds another epoch or owner means the claim was superseded, and the
//!   server must stop.
//!
//! Every ledger write that could race a newer server carries the epoch in the same
//! statement. The SQL is in the store; this module holds the types and the rules as
//! plain functions, so they can be read and tested without a database.

use jiff::Timestamp;
use sha2::{Digest, Sha256};

use stead_sys::identity::StartIdentity;

/// Who claims the lease.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Claimant {
    pub server_id: String,
    pub token_hash: String,
    pub pid: u32,
    pub start_identity: StartIdentity,
}

impl Claimant {
    /// A claimant for this process with a fresh secret token; the secret never leaves
    /// the process, only its hash is stored.
    pub fn new(server_id: String, pid: u32, start_identity: StartIdentity) -> Self {
        let mut secret = [0u8; 32];
        getrandom::fill(&mut secret).expect("the OS random source is available");
        Self {
            server_id,
            token_hash: token_hash(&secret),
            pid,
            start_identity,
        }
    }
}

/// A lease this process holds: the claimant plus the epoch it won.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeldLease {
    pub claimant: Claimant,
    pub epoch: i64,
    pub expires_at: Timestamp,
}

/// The lease row as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeaseRow {
    pub epoch: i64,
    pub owner: Option<LeaseOwner>,
    pub expires_at: Timestamp,
}

/// The owner fields of a claimed row (all null once released).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeaseOwner {
    pub server_id: String,
    pub token_hash: String,
    pub pid: u32,
    pub start_identity: StartIdentity,
}

impl LeaseRow {
    /// Whether a newcomer may claim the row at `now`: released, or past its expiry.
    pub fn claimable(&self, now: Timestamp) -> bool {
        self.owner.is_none() || self.expires_at <= now
    }

    /// Whether `lease` still owns this row, whatever the expiry says.
    pub fn owned_by(&self, lease: &HeldLease) -> bool {
        self.epoch == lease.epoch
            && self.owner.as_ref().is_some_and(|o| {
                o.server_id == lease.claimant.server_id
                    && o.token_hash == lease.claimant.token_hash
                    && o.pid == lease.claimant.pid
                    && o.start_identity == lease.claimant.start_identity
            })
    }
}

/// Whether the row's owner is provably gone from this machine: its pid is dead or now
/// belongs to a process with another start identity. Such an owner can write nothing
/// more, so its lease may be taken over before it expires.
pub fn owner_is_dead(row: &LeaseRow) -> bool {
    row.owner
        .as_ref()
        .is_some_and(|o| !stead_sys::identity::is_alive(o.pid, &o.start_identity))
}

/// The outcome of a claim.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ClaimOutcome {
    Claimed(HeldLease),
    /// Another owner holds an unexpired lease.
    Held(LeaseRow),
}

/// The outcome of a renewal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RenewOutcome {
    Renewed {
        expires_at: Timestamp,
    },
    /// The row no longer carries this lease's epoch and identity: stop serving.
    Superseded(LeaseRow),
}

/// The stored form of a token: hex SHA-256.
pub fn token_hash(secret: &[u8]) -> String {
    Sha256::digest(secret)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// A sentence naming who superseded `lease`, for the log line a stopping server writes.
pub fn supersession(lease: &HeldLease, row: &LeaseRow) -> String {
    match &row.owner {
        Some(owner) if row.epoch != lease.epoch => format!(
            "claim superseded: epoch {} was ours, epoch {} is now held by server {} (pid {})",
            lease.epoch, row.epoch, owner.server_id, owner.pid
        ),
        Some(owner) => format!(
            "claim superseded: epoch {} is held by server {} (pid {}) with another identity",
            row.epoch, owner.server_id, owner.pid
        ),
        None => format!(
            "claim superseded: the lease was released (epoch {}) by someone else",
            row.epoch
        ),
    }
}
