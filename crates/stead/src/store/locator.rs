//! Where a ledger lives, as the server and its monitors name it: the embedded SQLite file
//! of a state directory, or a PostgreSQL database several hosts share.
//!
//! A monitor is a separate process that records its run's transitions itself; its plan
//! carries the locator, so it opens the very ledger its server uses.

use std::path::PathBuf;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::postgres::{PgStore, redact_url};
use super::sqlite::SqliteStore;
use super::{Store, StoreError};
use crate::runs::RunRecorder;

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

    /// Opens it for a server of `machine_id`.
    pub fn open(&self, machine_id: &str) -> Result<Arc<dyn Store>, StoreError> {
        Ok(match self {
            Self::Sqlite { path } => Arc::new(SqliteStore::open(path)?),
            Self::Postgres { url } => Arc::new(PgStore::connect(url, machine_id)?),
        })
    }

    /// Opens it for a monitor, which only records its run.
    pub fn open_recorder(&self, machine_id: &str) -> Result<Box<dyn RunRecorder>, StoreError> {
        Ok(match self {
            Self::Sqlite { path } => Box::new(SqliteStore::open(path)?),
            Self::Postgres { url } => Box::new(PgStore::connect_recorder(url, machine_id)?),
        })
    }

    /// For messages and `status`: the path, or the URL without its password.
    pub fn describe(&self) -> String {
        match self {
            Self::Sqlite { path } => path.display().to_string(),
            Self::Postgres { url } => redact_url(url),
        }
    }
}
