//! The secret store: named values a job's runs get as environment variables, kept on
//! this host only, in one file private to the user (`DIR/secrets.json`, mode 0600) and
//! never in the ledger.
//!
//! The file is read by whoever builds a run's environment (the run's monitor, at its
//! start) and written by `stead secret set` and `stead secret rm`, each write a new file
//! renamed over the old one (synced, then its directory synced), under a lock
//! (`DIR/secrets.lock`) so two writers never lose each other's change. A file that is not
//! the user's own, or that others may read or write, is refused, not read: its values
//! may be known, or planted, by someone else. Why a file and not the macOS keychain is in
//! docs/secrets.md.

use std::collections::BTreeMap;
use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// The longest secret value: a token or a key, not a file.
pub const MAX_VALUE_BYTES: usize = 64 * 1024;

/// Why the store could not be read or written. Messages name the file, never a value.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SecretError {
    #[error("failed to read the secret store {path}: {source}")]
    Read { path: PathBuf, source: io::Error },
    #[error("failed to write the secret store {path}: {source}")]
    Write { path: PathBuf, source: io::Error },
    #[error("the secret store {path} is not valid: {detail}")]
    Invalid { path: PathBuf, detail: String },
    #[error(
        "the secret store {path} is owned by uid {owner}, not by you (uid {me}); refusing to use it"
    )]
    NotOwned { path: PathBuf, owner: u32, me: u32 },
    #[error(
        "the secret store {path} has mode {mode:04o}: others may read or change it; refusing to use it (chmod 600 {path})"
    )]
    Mode { path: PathBuf, mode: u32 },
    #[error(
        "invalid secret name {0:?}: use 1 to 128 letters, digits and '_', not starting with a digit"
    )]
    Name(String),
    #[error("secret {name}: {why}")]
    Value { name: String, why: &'static str },
    #[error("no secret named {0}")]
    NoSuchSecret(String),
}

/// One secret as the file keeps it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct Entry {
    value: String,
    /// When it was set (RFC 3339, UTC), as the writer gave it.
    set_at: String,
}

/// The whole file.
#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Contents {
    secrets: BTreeMap<String, Entry>,
}

/// A secret as listed: its name and when it was set, never its value.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SecretInfo {
    pub name: String,
    pub set_at: String,
}

/// The secret store of one state directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SecretStore {
    path: PathBuf,
}

impl SecretStore {
    /// The store kept in state directory `dir`.
    pub fn in_dir(dir: &Path) -> Self {
        Self {
            path: dir.join("secrets.json"),
        }
    }

    /// The store kept in the file `path`.
    pub fn at(path: &Path) -> Self {
        Self {
            path: path.to_path_buf(),
        }
    }

    /// The store's file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Every secret's value, by name; none when the file does not exist.
    pub fn values(&self) -> Result<BTreeMap<String, String>, SecretError> {
        Ok(self
            .read()?
            .secrets
            .into_iter()
            .map(|(name, entry)| (name, entry.value))
            .collect())
    }

    /// Every secret's name and when it was set.
    pub fn list(&self) -> Result<Vec<SecretInfo>, SecretError> {
        Ok(self
            .read()?
            .secrets
            .into_iter()
            .map(|(name, entry)| SecretInfo {
                name,
                set_at: entry.set_at,
            })
            .collect())
    }

    /// Sets `name` to `value` (replacing any earlier value), recording `set_at`.
    pub fn set(&self, name: &str, value: &str, set_at: &str) -> Result<(), SecretError> {
        check_name(name)?;
        check_value(name, value)?;
        self.change(|contents| {
            contents.secrets.insert(
                name.to_string(),
                Entry {
                    value: value.to_string(),
                    set_at: set_at.to_string(),
                },
            );
            Ok(())
        })
    }

    /// Removes `name`, answering what it was; an error when there is no such secret.
    pub fn remove(&self, name: &str) -> Result<SecretInfo, SecretError> {
        let mut removed = None;
        self.change(|contents| match contents.secrets.remove(name) {
            Some(entry) => {
                removed = Some(SecretInfo {
                    name: name.to_string(),
                    set_at: entry.set_at,
                });
                Ok(())
            }
            None => Err(SecretError::NoSuchSecret(name.to_string())),
        })?;
        Ok(removed.expect("removed above"))
    }

    /// Whether the file, when it exists, is this user's own and private to them: what
    /// `stead doctor` reports and every read checks.
    pub fn check_private(&self) -> Result<bool, SecretError> {
        match fs::symlink_metadata(&self.path) {
            Ok(meta) => check_private(&self.path, &meta).map(|()| true),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(false),
            Err(source) => Err(SecretError::Read {
                path: self.path.clone(),
                source,
            }),
        }
    }

    fn read(&self) -> Result<Contents, SecretError> {
        let read_error = |source| SecretError::Read {
            path: self.path.clone(),
            source,
        };
        // Opened without following a link, and judged by what was opened, so the file
        // checked is the file read.
        let file = match OpenOptions::new()
            .read(true)
            .custom_flags(no_follow())
            .open(&self.path)
        {
            Ok(file) => file,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Contents::default()),
            Err(e) => return Err(read_error(e)),
        };
        check_private(&self.path, &file.metadata().map_err(read_error)?)?;
        serde_json::from_reader(io::BufReader::new(file)).map_err(|e| SecretError::Invalid {
            path: self.path.clone(),
            detail: e.to_string(),
        })
    }

    /// Reads, changes and writes the file back, under the store's lock.
    fn change(
        &self,
        edit: impl FnOnce(&mut Contents) -> Result<(), SecretError>,
    ) -> Result<(), SecretError> {
        let write_error = |source| SecretError::Write {
            path: self.path.clone(),
            source,
        };
        let dir = self.path.parent().expect("the store is in a directory");
        let lock = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .mode(0o600)
            .open(dir.join("secrets.lock"))
            .map_err(write_error)?;
        lock.lock().map_err(write_error)?;
        let mut contents = self.read()?;
        edit(&mut contents)?;
        let json = serde_json::to_vec_pretty(&contents).expect("the store serializes");
        // A named temporary file is made 0600, in the same directory so the rename is
        // atomic; synced before and after the rename so a crash leaves the old file or
        // the new one, whole.
        let mut tmp = tempfile::Builder::new()
            .prefix(".secrets.")
            .tempfile_in(dir)
            .map_err(write_error)?;
        tmp.write_all(&json).map_err(write_error)?;
        tmp.as_file()
            .set_permissions(fs::Permissions::from_mode(0o600))
            .map_err(write_error)?;
        tmp.as_file().sync_all().map_err(write_error)?;
        tmp.persist(&self.path).map_err(|e| write_error(e.error))?;
        File::open(dir)
            .and_then(|d| d.sync_all())
            .map_err(write_error)
    }
}

/// `O_NOFOLLOW`: a link planted where the store is expected is never read through.
fn no_follow() -> i32 {
    rustix::fs::OFlags::NOFOLLOW.bits() as i32
}

fn check_private(path: &Path, meta: &fs::Metadata) -> Result<(), SecretError> {
    let me = rustix::process::getuid().as_raw();
    if meta.uid() != me {
        return Err(SecretError::NotOwned {
            path: path.to_path_buf(),
            owner: meta.uid(),
            me,
        });
    }
    let mode = meta.mode() & 0o7777;
    if !meta.is_file() || mode & 0o077 != 0 {
        return Err(SecretError::Mode {
            path: path.to_path_buf(),
            mode,
        });
    }
    Ok(())
}

fn check_name(name: &str) -> Result<(), SecretError> {
    match stead_protocol::valid_secret_name(name) {
        true => Ok(()),
        false => Err(SecretError::Name(name.to_string())),
    }
}

fn check_value(name: &str, value: &str) -> Result<(), SecretError> {
    let why = if value.is_empty() {
        // An empty value cannot be told apart in a log, so it could not be masked.
        "the value is empty"
    } else if value.contains('\0') {
        "the value contains a NUL byte, which no environment variable can hold"
    } else if value.len() > MAX_VALUE_BYTES {
        "the value is longer than 64 KiB"
    } else {
        return Ok(());
    };
    Err(SecretError::Value {
        name: name.to_string(),
        why,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn store() -> (tempfile::TempDir, SecretStore) {
        let dir = tempfile::tempdir().unwrap();
        let store = SecretStore::in_dir(dir.path());
        (dir, store)
    }

    #[test]
    fn a_set_secret_is_read_back_and_listed_without_its_value() {
        let (_dir, store) = store();
        assert!(store.values().unwrap().is_empty());
        store
            .set("API_TOKEN", "t0k3n", "2026-12-06T08:00:00Z")
            .unwrap();
        store.set("B", "two", "2026-12-06T08:01:00Z").unwrap();
        store
            .set("API_TOKEN", "n3w", "2026-12-06T08:02:00Z")
            .unwrap();
        let values = store.values().unwrap();
        assert_eq!(values["API_TOKEN"], "n3w");
        assert_eq!(values["B"], "two");
        let listed = store.list().unwrap();
        assert_eq!(
            listed,
            vec![
                SecretInfo {
                    name: "API_TOKEN".into(),
                    set_at: "2026-12-06T08:02:00Z".into()
                },
                SecretInfo {
                    name: "B".into(),
                    set_at: "2026-12-06T08:01:00Z".into()
                },
            ]
        );
        let mode = fs::metadata(store.path()).unwrap().mode() & 0o777;
        assert_eq!(mode, 0o600);
        assert_eq!(store.remove("B").unwrap().set_at, "2026-12-06T08:01:00Z");
        assert!(!store.values().unwrap().contains_key("B"));
        assert!(matches!(
            store.remove("B"),
            Err(SecretError::NoSuchSecret(name)) if name == "B"
        ));
    }

    #[test]
    fn a_store_others_may_read_is_refused() {
        let (_dir, store) = store();
        store.set("A", "x", "t").unwrap();
        assert!(store.check_private().unwrap());
        fs::set_permissions(store.path(), fs::Permissions::from_mode(0o644)).unwrap();
        let err = store.values().unwrap_err();
        assert!(
            matches!(err, SecretError::Mode { mode: 0o644, .. }),
            "{err}"
        );
        assert!(store.check_private().is_err());
    }

    #[test]
    fn a_link_in_place_of_the_store_is_not_followed() {
        let (dir, store) = store();
        let elsewhere = dir.path().join("elsewhere.json");
        fs::write(&elsewhere, r#"{"secrets":{}}"#).unwrap();
        std::os::unix::fs::symlink(&elsewhere, store.path()).unwrap();
        assert!(store.values().is_err());
    }

    #[test]
    fn names_and_values_are_checked() {
        let (_dir, store) = store();
        for bad in ["", "1A", "A-B", "A B"] {
            assert!(matches!(
                store.set(bad, "v", "t"),
                Err(SecretError::Name(_))
            ));
        }
        assert!(matches!(
            store.set("A", "", "t"),
            Err(SecretError::Value { .. })
        ));
        assert!(matches!(
            store.set("A", "a\0b", "t"),
            Err(SecretError::Value { .. })
        ));
        store.set("_X1", "v", "t").unwrap();
    }
}
