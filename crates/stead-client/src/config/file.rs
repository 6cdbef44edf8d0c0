//! Reading `config.toml` setting by setting, as [`SETTINGS`] lists them. A table or key
//! no setting has, or one setting given in both its spellings, is refused: either would
//! leave a value the file seems to set silently not in force.

use std::path::Path;

use super::{Config, ConfigError, SETTINGS};

/// Reads the file's text into `config`.
pub(super) fn apply(path: &Path, text: &str, config: &mut Config) -> Result<(), ConfigError> {
    let file: toml::Table = toml::from_str(text).map_err(|e| ConfigError::Parse {
        path: path.to_path_buf(),
        message: e.message().to_string(),
    })?;
    // Every key is checked before any value, so a typo is reported as a typo.
    for (name, item) in &file {
        let unknown = |key: String, known: String| ConfigError::UnknownKey {
            path: path.to_path_buf(),
            key,
            known,
        };
        if !tables().any(|table| table == name) {
            let tables: Vec<String> = tables().map(|t| format!("[{t}]")).collect();
            return Err(unknown(
                name.clone(),
                format!("the file holds the tables {}", tables.join(", ")),
            ));
        }
        let Some(table) = item.as_table() else {
            return Err(ConfigError::File {
                path: path.to_path_buf(),
                setting: name.clone(),
                value: item.to_string(),
                problem: format!("expected a table, [{name}]"),
            });
        };
        for key in table.keys() {
            let known = SETTINGS
                .iter()
                .filter(|s| s.table == name)
                .any(|s| s.key == key || s.old_key() == Some(key.as_str()));
            if !known {
                let keys: Vec<&str> = SETTINGS
                    .iter()
                    .filter(|s| s.table == name)
                    .map(|s| s.key)
                    .collect();
                return Err(unknown(
                    format!("[{name}] {key}"),
                    format!("[{name}] takes {}", keys.join(", ")),
                ));
            }
        }
    }
    for setting in SETTINGS {
        let Some(table) = file.get(setting.table).and_then(toml::Value::as_table) else {
            continue;
        };
        let refused = |spelled: String, value: &toml::Value| {
            let value = setting.shown_toml(value);
            move |problem| ConfigError::File {
                path: path.to_path_buf(),
                setting: spelled,
                value,
                problem,
            }
        };
        let old = setting
            .old()
            .and_then(|old| Some((table.get(old.key)?, old)));
        match (table.get(setting.key), old) {
            (Some(_), Some((_, old))) => {
                return Err(ConfigError::TwoSpellings {
                    path: path.to_path_buf(),
                    key: setting.name(),
                    old: old.name(),
                });
            }
            (Some(value), None) => setting
                .read_file(value, config)
                .map_err(refused(setting.name(), value))?,
            (None, Some((value, old))) => old
                .read(value, config)
                .map_err(refused(old.name(), value))?,
            (None, None) => {}
        }
    }
    Ok(())
}

/// The tables settings live in, each once, in the order of [`SETTINGS`].
fn tables() -> impl Iterator<Item = &'static str> {
    SETTINGS
        .iter()
        .enumerate()
        .filter(|(i, s)| SETTINGS[..*i].iter().all(|e| e.table != s.table))
        .map(|(_, s)| s.table)
}
