//! The docs and the table agree. `docs/configuration.md` holds the table as
//! [`markdown`] renders it (`STEAD_RECORD_DOCS=1 cargo test -p stead-client config::docs`
//! writes it there); every setting and variable is named in the docs; and the docs (and
//! the command line's help) name no setting that does not exist, in a `[table] key`
//! reference, a `STEAD_*` variable of a setting's shape or a `config.toml` example.

use std::path::{Path, PathBuf};

use stead_protocol::KeepFree;
use stead_protocol::units::{format_delay, format_size};

use super::value::Kind;
use super::{Config, SETTINGS, Setting, file};

const BEGIN: &str = "<!-- The settings table, generated from \
                     crates/stead-client/src/config/settings.rs: do not edit it here. -->\n";
const END: &str = "<!-- End of the settings table. -->\n";

/// The table of every setting, as `docs/configuration.md` shows it.
fn markdown() -> String {
    let mut out = String::from(
        "| key | value | default | variable | old key | what it sets |\n\
         | --- | --- | --- | --- | --- | --- |\n",
    );
    let code = |text: &str| format!("`{text}`");
    for s in SETTINGS {
        let old = s.old().map_or_else(
            || "—".to_string(),
            |old| {
                let unit = old.accepts().trim_start_matches("a whole number of ");
                format!("`{}` ({unit})", old.key)
            },
        );
        out.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} |\n",
            code(&s.name()),
            s.accepts(),
            default_of(s).map_or_else(|| "unset".to_string(), |d| code(&d)),
            s.env.map_or_else(|| "—".to_string(), code),
            old,
            s.doc
        ));
    }
    out
}

/// A setting's default in its documented spelling (its field in [`Config::default`]);
/// `None` when it is unset by default.
fn default_of(setting: &Setting) -> Option<String> {
    let mut config = Config::default();
    Some(match &setting.kind {
        Kind::Duration(span) => match *(span.field)(&mut config) {
            d if d.is_zero() => "0".into(),
            d => format_delay(d),
        },
        Kind::Size { field, .. } => format_size(*field(&mut config)),
        Kind::Reserve(field) => match *field(&mut config) {
            KeepFree::Percent(p) => format!("{p}%"),
            KeepFree::Bytes(b) => format_size(b),
        },
        Kind::Limit(field) => (*field(&mut config))?.to_string(),
        Kind::Address(field) => (*field(&mut config))?.to_string(),
        Kind::Flag(field) => field(&mut config).to_string(),
        Kind::Url(field) => stead_protocol::redact_url(field(&mut config).as_deref()?),
        Kind::Path(field) => field(&mut config).as_ref()?.display().to_string(),
    })
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

/// README.md and docs/*.md, by path.
fn docs() -> Vec<(PathBuf, String)> {
    let mut paths = vec![root().join("README.md")];
    for entry in std::fs::read_dir(root().join("docs")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "md") {
            paths.push(path);
        }
    }
    read_all(paths)
}

/// The command line's sources, whose help and messages name settings too.
fn cli_sources() -> Vec<(PathBuf, String)> {
    fn walk(dir: &Path, into: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(&path, into);
            } else if path.extension().is_some_and(|e| e == "rs") {
                into.push(path);
            }
        }
    }
    let mut paths = Vec::new();
    walk(&root().join("crates/stead/src"), &mut paths);
    read_all(paths)
}

fn read_all(paths: Vec<PathBuf>) -> Vec<(PathBuf, String)> {
    paths
        .into_iter()
        .map(|path| {
            let text = std::fs::read_to_string(&path).unwrap();
            (path, text)
        })
        .collect()
}

#[test]
fn the_configuration_doc_holds_the_table_as_the_code_renders_it() {
    let path = root().join("docs/configuration.md");
    let text = std::fs::read_to_string(&path).unwrap();
    let (Some(begin), Some(end)) = (text.find(BEGIN), text.find(END)) else {
        panic!("{} has no {BEGIN:?} ... {END:?}", path.display());
    };
    let written = &text[begin + BEGIN.len()..end];
    let rendered = markdown();
    if std::env::var_os("STEAD_RECORD_DOCS").is_some_and(|v| v == "1") {
        let updated = format!("{}{rendered}{}", &text[..begin + BEGIN.len()], &text[end..]);
        std::fs::write(&path, updated).unwrap();
    } else {
        assert!(
            written == rendered,
            "{} is not the settings table as the code has it; run \
             STEAD_RECORD_DOCS=1 cargo test -p stead-client config::docs\n\
             written:\n{written}\nrendered:\n{rendered}",
            path.display()
        );
    }
}

#[test]
fn every_default_is_written_as_its_setting_reads_it() {
    for setting in SETTINGS {
        let Some(text) = default_of(setting) else {
            continue;
        };
        let mut config = Config::default();
        setting
            .read_file(&toml::Value::String(text.clone()), &mut config)
            .unwrap_or_else(|e| panic!("{} = {text:?}: {e}", setting.name()));
        assert_eq!(config, Config::default(), "{} = {text:?}", setting.name());
    }
}

#[test]
fn every_setting_and_its_variable_is_documented() {
    let docs = docs();
    let documented = |text: &str| docs.iter().any(|(_, doc)| doc.contains(text));
    for setting in SETTINGS {
        let name = format!("`{}`", setting.name());
        assert!(documented(&name), "no doc names {name}");
        if let Some(env) = setting.env {
            assert!(documented(&format!("`{env}`")), "no doc names `{env}`");
        }
    }
}

#[test]
fn the_docs_and_the_help_name_no_setting_that_does_not_exist() {
    let mut wrong = Vec::new();
    for (path, text) in docs().into_iter().chain(cli_sources()) {
        for reference in references(&text) {
            if !SETTINGS.iter().any(|s| {
                reference == s.name() || s.old().is_some_and(|old| reference == old.name())
            }) {
                wrong.push(format!("{}: {reference}", path.display()));
            }
        }
        for name in variables(&text) {
            if !SETTINGS.iter().any(|s| s.env == Some(name)) {
                wrong.push(format!("{}: {name}", path.display()));
            }
        }
    }
    assert!(wrong.is_empty(), "no such setting: {wrong:#?}");
}

#[test]
fn every_config_example_in_the_docs_is_read_without_error() {
    let mut examples = 0;
    for (path, text) in docs() {
        for block in toml_blocks(&text) {
            let Ok(table) = block.parse::<toml::Table>() else {
                continue;
            };
            let is_config = !table.is_empty()
                && table
                    .keys()
                    .all(|k| SETTINGS.iter().any(|s| s.table == k.as_str()));
            if is_config {
                examples += 1;
                let mut config = Config::default();
                file::apply(&path, block, &mut config)
                    .and_then(|()| config.validate())
                    .unwrap_or_else(|e| panic!("{e}\n{block}"));
            }
        }
    }
    assert!(examples > 0, "no config.toml example in the docs");
}

/// The `[table] key` references to a setting's table in `text`.
fn references(text: &str) -> Vec<String> {
    let tables: Vec<&str> = SETTINGS.iter().map(|s| s.table).collect();
    let mut found = Vec::new();
    for (at, _) in text.match_indices('[') {
        let rest = &text[at + 1..];
        let Some((table, after)) = rest.split_once("] ") else {
            continue;
        };
        if !tables.contains(&table) {
            continue;
        }
        let key: String = after
            .chars()
            .take_while(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == '_')
            .collect();
        if !key.is_empty() {
            found.push(format!("[{table}] {key}"));
        }
    }
    found
}

/// The `STEAD_*` variables in `text` shaped like a setting's: named after a setting's
/// table (`STEAD_RETENTION_…`) or after a unit (`…_MS`, `…_BYTES`). Test hooks
/// (`STEAD_TEST_…`) are not settings.
fn variables(text: &str) -> Vec<&str> {
    let mut found = Vec::new();
    for (at, _) in text.match_indices("STEAD_") {
        let name = &text[at..];
        let end = name
            .find(|c: char| !(c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_'))
            .unwrap_or(name.len());
        let name = &name[..end];
        let of_a_table = SETTINGS
            .iter()
            .any(|s| name.starts_with(&format!("STEAD_{}_", s.table.to_ascii_uppercase())));
        let of_a_unit = name.ends_with("_MS") || name.ends_with("_BYTES");
        if (of_a_table || of_a_unit) && !name.starts_with("STEAD_TEST_") {
            found.push(name);
        }
    }
    found
}

/// The contents of the ```toml blocks in a Markdown text.
fn toml_blocks(text: &str) -> Vec<&str> {
    let mut blocks = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find("```toml\n") {
        let body = &rest[start + "```toml\n".len()..];
        let Some(end) = body.find("```") else { break };
        blocks.push(&body[..end]);
        rest = &body[end + 3..];
    }
    blocks
}

#[test]
fn the_scanners_find_what_they_look_for() {
    assert_eq!(
        references("see `[timings] lease_ms` and [http] listen; [[job]] a, [x] y, [logs]\n"),
        ["[timings] lease_ms", "[http] listen"]
    );
    assert_eq!(
        variables("STEAD_LEASE_MS, STEAD_RETENTION_FOO, STEAD_STATE_DIR, STEAD_TEST_X_MS."),
        ["STEAD_LEASE_MS", "STEAD_RETENTION_FOO"]
    );
    assert_eq!(
        toml_blocks("a\n```toml\n[http]\n```\nb\n```sh\nx\n```\n```toml\nc = 1\n```\n"),
        ["[http]\n", "c = 1\n"]
    );
}
