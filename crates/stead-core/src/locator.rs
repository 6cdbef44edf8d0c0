//! Where a ledger lives, as the server and its monitors name it: the embedded SQLite file
//! of a state directory, or a PostgreSQL database several hosts share.
//!
//! A monitor is a separate process that records its run's transitions itself. Its server
//! hands it the [`StoreLocator`] it uses (over the monitor's stdin, never stored), while
//! the run's plan, which is kept in the ledger, names the ledger only by its
//! [`LedgerRef`]: a URL may carry a password, and no row or log may. This is the locator
//! as data; `stead-store` opens it.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};
use stead_protocol::redact_url;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum StoreLocator {
    /// `DIR/stead.db`, this machine's alone.
    Sqlite { path: PathBuf },
    /// A `postgres://` URL shared by every host of a cluster.
    Postgres { url: String },
}

impl StoreLocator {
    /// The ledger named by a `--store` flag or `[store] url`, or the state directory's
    /// own SQLite file when none is given.
    pub fn of(url: Option<&str>, sqlite: PathBuf) -> Self {
        match url {
            Some(url) => Self::Postgres {
                url: url.to_string(),
            },
            None => Self::Sqlite { path: sqlite },
        }
    }

    /// Whether several hosts may share this ledger.
    pub fn is_shared(&self) -> bool {
        matches!(self, Self::Postgres { .. })
    }

    /// For messages and `status`: the path, or the URL without its password.
    pub fn describe(&self) -> String {
        match self {
            Self::Sqlite { path } => path.display().to_string(),
            Self::Postgres { url } => redact_url(url),
        }
    }
}

/// Which ledger a run belongs to, as its plan (a ledger row) names it: the SQLite file, or
/// a PostgreSQL ledger by identity (the id stead gave it when it made its schema, and the
/// database's name). It carries nothing secret: each host reaches a shared ledger with its
/// own URL, and a monitor checks that its URL leads to this very ledger.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum LedgerRef {
    Sqlite { path: PathBuf },
    Postgres { ledger_id: String, database: String },
}

impl LedgerRef {
    /// Whether several hosts may share this ledger.
    pub fn is_shared(&self) -> bool {
        matches!(self, Self::Postgres { .. })
    }

    /// For messages.
    pub fn describe(&self) -> String {
        match self {
            Self::Sqlite { path } => path.display().to_string(),
            Self::Postgres {
                ledger_id,
                database,
            } => format!("ledger {ledger_id} (database {database})"),
        }
    }
}
