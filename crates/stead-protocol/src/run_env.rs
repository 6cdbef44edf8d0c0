//! The variables stead adds to a run's command on top of its server's environment, and
//! which of them a server started from inside a run must not inherit.
//!
//! A command may start a server (`stead status` after the one it ran under stopped, a
//! `stead restart` from an agent's turn). That server is the user's, not the run's: it
//! serves every job, so it must not carry this run's identity, token or secrets into the
//! environment of every command it runs afterwards.

/// What stead sets for each command it runs: the run's identity, its token, the marker
/// of its processes, and the list of its secret variables ([`SECRET_VARIABLES_VAR`]).
/// Every one is set again for each command a server runs, so leaving them out of a
/// server's own environment changes nothing a run of it sees.
pub const RUN_VARIABLES: &[&str] = &[
    "STEAD_RUN_ID",
    "STEAD_JOB",
    "STEAD_TRIGGER",
    "STEAD_SCHEDULED_AT",
    "STEAD_IDEMPOTENCY_KEY",
    "STEAD_ATTEMPT",
    "STEAD_RUN_TOKEN",
    "STEAD_STATE_DIR",
    "STEAD_ALTERNATIVE",
    "STEAD_INVOCATION_ID",
    SECRET_VARIABLES_VAR,
];

/// The names of the variables that hold a run's secrets, comma-separated: set by the
/// monitor beside the values (never a value itself), so that a server started from
/// inside the run knows which variables to leave out.
pub const SECRET_VARIABLES_VAR: &str = "STEAD_SECRET_VARS";

/// The value of [`SECRET_VARIABLES_VAR`] for these secret variables.
pub fn secret_variables<'a>(vars: impl IntoIterator<Item = &'a str>) -> String {
    vars.into_iter().collect::<Vec<_>>().join(",")
}

/// What a server started by a process whose environment is read by `lookup` must not
/// inherit: stead's run variables and the run's secret variables. Names that are not
/// variable names are passed over (the list is a run's own, but a command may change it).
pub fn left_out_of_a_server(lookup: impl Fn(&str) -> Option<String>) -> Vec<String> {
    let secrets = lookup(SECRET_VARIABLES_VAR).unwrap_or_default();
    RUN_VARIABLES
        .iter()
        .map(|var| var.to_string())
        .chain(
            secrets
                .split(',')
                .filter(|var| crate::valid_variable_name(var))
                .map(str::to_string),
        )
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_runs_secret_variables_are_left_out_beside_its_own() {
        let listed = secret_variables(["API_TOKEN", "GH"]);
        assert_eq!(listed, "API_TOKEN,GH");
        let left_out = left_out_of_a_server(|var| {
            (var == SECRET_VARIABLES_VAR).then(|| format!("{listed},not a name,"))
        });
        assert!(left_out.iter().any(|v| v == "API_TOKEN"));
        assert!(left_out.iter().any(|v| v == "GH"));
        assert!(left_out.iter().any(|v| v == "STEAD_RUN_TOKEN"));
        assert!(!left_out.iter().any(|v| v == "not a name" || v.is_empty()));
        assert_eq!(left_out.len(), RUN_VARIABLES.len() + 2);
    }

    #[test]
    fn outside_a_run_only_stead_s_own_variables_are_left_out() {
        assert_eq!(left_out_of_a_server(|_| None), RUN_VARIABLES);
    }
}
