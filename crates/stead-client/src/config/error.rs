//! Why a configuration was refused. Each message names the setting, where its value was
//! read (the file or the variable), the value and what is accepted instead.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    #[error("failed to read {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("invalid config file {path}: {message}")]
    Parse { path: PathBuf, message: String },
    /// A key or table no setting has: a typo must not leave a default in force.
    #[error("unknown key {key} in {path}; {known}")]
    UnknownKey {
        path: PathBuf,
        key: String,
        /// What the file may hold there instead.
        known: String,
    },
    /// A setting given in its unit-bearing spelling and its old one at once.
    #[error(
        "{path} gives both {key} and {old}, which are one setting: keep {key} (it takes \
         units) and remove {old}"
    )]
    TwoSpellings {
        path: PathBuf,
        key: String,
        old: String,
    },
    #[error("invalid {setting} = {value} in {path}: {problem}")]
    File {
        path: PathBuf,
        /// The setting as the file spells it: `[retention] runs_max_age_ms`.
        setting: String,
        value: String,
        problem: String,
    },
    #[error("invalid {name}={value} (it sets {setting}): {problem}")]
    Env {
        name: &'static str,
        setting: String,
        value: String,
        problem: String,
    },
    #[error("invalid timings: {0}")]
    Inconsistent(String),
    #[error("invalid HTTP setting: {0}")]
    Http(String),
    #[error("invalid store setting: {0}")]
    Store(String),
}
