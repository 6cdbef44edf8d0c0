//! A run's secret token: what proves a checkpoint write comes from the run's own
//! command. Each attempt's plan carries a fresh one in its environment
//! ([`RUN_TOKEN_VAR`]); the ledger keeps it only inside the plan, which no listing shows,
//! and a token given back is compared by digest, so the time a comparison takes says
//! nothing about how much of it was right.

use sha2::{Digest, Sha256};

use crate::runs::MonitorPlan;

/// The environment variable that carries the token to the run's command.
pub const RUN_TOKEN_VAR: &str = "STEAD_RUN_TOKEN";

/// A fresh token: 32 random bytes, hex.
pub fn new_run_token() -> String {
    let mut secret = [0u8; 32];
    getrandom::fill(&mut secret).expect("the OS random source is available");
    secret.iter().map(|b| format!("{b:02x}")).collect()
}

/// Whether `given` is the token of the run `plan` is for. A plan of an earlier release
/// carries none, and nothing matches it.
pub fn token_matches(plan: &MonitorPlan, given: &str) -> bool {
    plan.env
        .get(RUN_TOKEN_VAR)
        .is_some_and(|own| Sha256::digest(own.as_bytes()) == Sha256::digest(given.as_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_fresh_and_long() {
        let (a, b) = (new_run_token(), new_run_token());
        assert_ne!(a, b);
        assert_eq!(a.len(), 64);
        assert!(a.bytes().all(|c| c.is_ascii_hexdigit()));
    }
}
