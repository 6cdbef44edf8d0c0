//! The run's secrets: the values of the plan's `secrets`, read from this host's secret
//! store as the command is about to start, given to the command (and its alternatives)
//! as environment variables, and masked in the log. They exist in this process only
//! while the run goes on: never in the plan, the ledger, a record or a message.

use std::path::Path;

use stead_client::secrets::SecretStore;
use stead_core::runs::MonitorPlan;

use super::mask::Masks;

/// The values a run's commands get.
#[derive(Debug, Default)]
pub struct Given {
    /// (variable, value), for the command's environment.
    pub env: Vec<(String, String)>,
    /// The same values, to mask in the log.
    pub masks: Masks,
}

/// The values of `plan`'s secrets from the store at `store`. The error is the reason the
/// run fails to start, naming the secret and this host, never a value.
pub fn read(plan: &MonitorPlan, store: Option<&Path>) -> Result<Given, String> {
    if plan.secrets.is_empty() {
        return Ok(Given::default());
    }
    let host = stead_sys::machine::host_name();
    let names = || {
        let mut names: Vec<&str> = plan.secrets.values().map(String::as_str).collect();
        names.dedup();
        names.join(", ")
    };
    let Some(store) = store else {
        return Err(format!(
            "host {host} was given no secret store, so it has no secret {}",
            names()
        ));
    };
    let values = SecretStore::at(store)
        .values()
        .map_err(|e| format!("secrets {} on host {host}: {e}", names()))?;
    let mut env = Vec::with_capacity(plan.secrets.len());
    for (var, name) in &plan.secrets {
        match values.get(name) {
            Some(value) => env.push((var.clone(), value.clone())),
            None => {
                return Err(format!(
                    "secret {name} is not set on host {host} (stead secret set {name})"
                ));
            }
        }
    }
    let named = plan
        .secrets
        .iter()
        .zip(&env)
        .map(|((_, name), (_, value))| (name.as_str(), value.as_str()));
    let masks = Masks::new(named);
    Ok(Given { env, masks })
}
