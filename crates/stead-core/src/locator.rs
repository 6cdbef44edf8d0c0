//! Where a ledger lives, as the server and its monitors name it: the embedded SQLite file
//! of a state directory, or a PostgreSQL database several hosts share.
//!
//! A monitor is a separate process that records its run's transitions itself; its plan
//! carries the locator, so it opens the very ledger its server uses. This is the locator
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
