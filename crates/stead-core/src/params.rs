//! A run's own parameters (`stead run NAME --env K=V -- ARGS`): checked before anything
//! is written, and applied to what the run's monitor executes.

use stead_protocol::RunParams;

/// The most environment variables and arguments one run may add, together.
pub const MAX_PARAMS: usize = 256;

/// The most bytes one run's parameters may hold (names, values and arguments).
pub const MAX_PARAMS_BYTES: usize = 64 * 1024;

/// Why a run's parameters were refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParamsError {
    #[error(
        "env name {0:?} is not a valid variable name (letters, digits and '_', not starting with a digit)"
    )]
    EnvName(String),
    #[error("env name {0:?} is reserved: stead sets the STEAD_* variables of a run itself")]
    Reserved(String),
    #[error("env {0} contains a NUL byte")]
    EnvNul(String),
    #[error("argument {0} contains a NUL byte")]
    ArgNul(usize),
    #[error("too many parameters: {0} env variables and arguments (at most {MAX_PARAMS})")]
    TooMany(usize),
    #[error("the parameters are too large: {0} bytes (at most {MAX_PARAMS_BYTES})")]
    TooLarge(usize),
}

/// Checks a run's parameters.
pub fn validate(params: &RunParams) -> Result<(), ParamsError> {
    let count = params.env.len() + params.args.len();
    if count > MAX_PARAMS {
        return Err(ParamsError::TooMany(count));
    }
    let bytes: usize = params
        .env
        .iter()
        .map(|(k, v)| k.len() + v.len())
        .chain(params.args.iter().map(String::len))
        .sum();
    if bytes > MAX_PARAMS_BYTES {
        return Err(ParamsError::TooLarge(bytes));
    }
    for (name, value) in &params.env {
        if !stead_protocol::valid_variable_name(name) {
            return Err(ParamsError::EnvName(name.clone()));
        }
        if name.starts_with("STEAD_") {
            return Err(ParamsError::Reserved(name.clone()));
        }
        if value.contains('\0') {
            return Err(ParamsError::EnvNul(name.clone()));
        }
    }
    if let Some(i) = params.args.iter().position(|a| a.contains('\0')) {
        return Err(ParamsError::ArgNul(i + 1));
    }
    Ok(())
}

/// An argument vector with the run's arguments appended: after the program's own
/// arguments, or, for a shell job (`["sh", "-c", SCRIPT]`), as the script's `$@` (its
/// `$0` is the job's name).
pub fn with_args(argv: Vec<String>, shell: bool, job: &str, args: &[String]) -> Vec<String> {
    if args.is_empty() {
        return argv;
    }
    let mut argv = argv;
    if shell {
        argv.push(job.to_string());
    }
    argv.extend(args.iter().cloned());
    argv
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(env: &[(&str, &str)], args: &[&str]) -> RunParams {
        RunParams {
            env: env
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            args: args.iter().map(|a| a.to_string()).collect(),
        }
    }

    #[test]
    fn good_parameters_pass_and_bad_ones_say_why() {
        assert_eq!(
            validate(&params(&[("TARGET", "prod")], &["--dry-run", ""])),
            Ok(())
        );
        assert_eq!(
            validate(&params(&[("1X", "a")], &[])),
            Err(ParamsError::EnvName("1X".into()))
        );
        assert_eq!(
            validate(&params(&[("STEAD_RUN_ID", "7")], &[])),
            Err(ParamsError::Reserved("STEAD_RUN_ID".into()))
        );
        assert_eq!(
            validate(&params(&[("A", "x\0y")], &[])),
            Err(ParamsError::EnvNul("A".into()))
        );
        assert_eq!(
            validate(&params(&[], &["ok", "b\0d"])),
            Err(ParamsError::ArgNul(2))
        );
        let many: Vec<String> = (0..=MAX_PARAMS).map(|i| i.to_string()).collect();
        let many: Vec<&str> = many.iter().map(String::as_str).collect();
        assert_eq!(
            validate(&params(&[], &many)),
            Err(ParamsError::TooMany(MAX_PARAMS + 1))
        );
        let big = "x".repeat(MAX_PARAMS_BYTES + 1);
        assert_eq!(
            validate(&params(&[], &[&big])),
            Err(ParamsError::TooLarge(MAX_PARAMS_BYTES + 1))
        );
    }

    #[test]
    fn arguments_follow_the_program_or_become_the_scripts_positional_parameters() {
        let args = vec!["a b".to_string(), "c".to_string()];
        assert_eq!(
            with_args(vec!["echo".into(), "x".into()], false, "j", &args),
            ["echo", "x", "a b", "c"]
        );
        assert_eq!(
            with_args(
                vec!["sh".into(), "-c".into(), "echo \"$@\"".into()],
                true,
                "j",
                &args
            ),
            ["sh", "-c", "echo \"$@\"", "j", "a b", "c"]
        );
        assert_eq!(with_args(vec!["true".into()], true, "j", &[]), ["true"]);
    }
}
