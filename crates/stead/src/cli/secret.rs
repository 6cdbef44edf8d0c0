//! `stead secret set|ls|rm`: this host's secret store (`DIR/secrets.json`, 0600), whose
//! values a job's runs get as variables (`--secret NAME`, `secrets = [...]`). No server
//! is involved: the store is a file of this host's, never in the ledger, and no command
//! ever prints a value.

use std::io::{IsTerminal, Read};
use std::path::Path;

use clap::Subcommand;
use serde::Serialize;
use stead_client::paths::StatePaths;
use stead_client::secrets::{MAX_VALUE_BYTES, SecretError, SecretInfo};
use stead_protocol::exit;

use super::output::{self, OutputArgs, Show};
use super::render;

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    command: SecretCommand,
}

#[derive(Debug, Subcommand)]
enum SecretCommand {
    /// Set a secret: its value read from stdin, or typed without echo at a terminal
    Set(NameArgs),
    /// List the secrets: their names and when each was set, never their values
    Ls(OutputArgs),
    /// Remove a secret
    Rm(NameArgs),
}

#[derive(Debug, clap::Args)]
struct NameArgs {
    /// The secret's name: letters, digits and `_`, not starting with a digit
    name: String,
    #[command(flatten)]
    format: OutputArgs,
}

/// What `set` and `rm` print with `--json`.
#[derive(Debug, Serialize)]
struct Changed<'a> {
    #[serde(flatten)]
    secret: &'a SecretInfo,
    /// `set` or `removed`.
    action: &'static str,
}

pub fn run(dir: Option<&Path>, args: Args) -> anyhow::Result<i32> {
    let store = StatePaths::resolve(dir)?.secrets();
    match args.command {
        SecretCommand::Set(set) => {
            let value = read_value(&set.name)?;
            let set_at = jiff::Timestamp::now()
                .round(jiff::Unit::Second)
                .expect("a second rounds")
                .to_string();
            store.set(&set.name, &value, &set_at)?;
            let secret = SecretInfo {
                name: set.name,
                set_at,
            };
            let changed = Changed {
                secret: &secret,
                action: "set",
            };
            output::show_with(&changed, set.format, || {
                format!("secret {} set\n", secret.name)
            })?;
        }
        SecretCommand::Ls(format) => output::show(&store.list()?, format)?,
        SecretCommand::Rm(rm) => {
            let secret = store.remove(&rm.name)?;
            let changed = Changed {
                secret: &secret,
                action: "removed",
            };
            output::show_with(&changed, rm.format, || {
                format!("removed secret {}\n", secret.name)
            })?;
        }
    }
    Ok(exit::SUCCESS)
}

/// The value: typed at a terminal without echo, or all of stdin less one final line
/// ending (what `echo`, `printf '%s\n'` and a here-string add).
fn read_value(name: &str) -> anyhow::Result<String> {
    if std::io::stdin().is_terminal() {
        return Ok(rpassword::prompt_password(format!("value of {name}: "))?);
    }
    let mut bytes = Vec::new();
    std::io::stdin()
        .take(MAX_VALUE_BYTES as u64 + 2)
        .read_to_end(&mut bytes)?;
    let mut value = String::from_utf8(bytes).map_err(|_| SecretError::Value {
        name: name.to_string(),
        why: "the value is not UTF-8",
    })?;
    if value.ends_with('\n') {
        value.pop();
        if value.ends_with('\r') {
            value.pop();
        }
    }
    Ok(value)
}

impl Show for Vec<SecretInfo> {
    fn human(&self) -> String {
        if self.is_empty() {
            return "no secrets; set one with `stead secret set NAME`\n".to_string();
        }
        let rows = self
            .iter()
            .map(|s| vec![s.name.clone(), render::when(&s.set_at)]);
        render::table(&["NAME", "SET"], rows)
    }
}
