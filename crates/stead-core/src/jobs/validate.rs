//! Checking a job spec before anything is stored.
//!
//! Validation also normalizes: a cron job gets its time zone written down (the
//! machine's, when none was given), and durations are rewritten in one canonical form,
//! so the stored spec means the same thing wherever and whenever it is read.

use stead_protocol::JobSpec;

use crate::schedule::{self, CronSchedule, IntervalSchedule, ScheduleError};

/// Why a job spec was refused. Messages name the field and the value.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum JobError {
    #[error(
        "invalid job name {0:?}: use 1 to 64 letters, digits, '-', '_' or '.', starting with a letter or digit"
    )]
    Name(String),
    #[error("job {job}: {source}")]
    Schedule {
        job: String,
        #[source]
        source: ScheduleError,
    },
    #[error("job {job}: give either cron or every, not both")]
    TwoSchedules { job: String },
    #[error("job {job}: tz {tz:?} needs a cron schedule")]
    ZoneWithoutCron { job: String, tz: String },
    #[error("job {job}: the command is empty")]
    EmptyCommand { job: String },
    #[error(
        "job {job}: with shell, the command is one script string (got {count} words); quote the script as one argument"
    )]
    ShellWords { job: String, count: usize },
    #[error("job {job}: cwd {cwd:?} is not an absolute path")]
    RelativeCwd { job: String, cwd: String },
    #[error("job {job}: env name {name:?} is not a valid variable name")]
    EnvName { job: String, name: String },
    #[error("job {job}: env {name} contains a NUL byte")]
    EnvValue { job: String, name: String },
    #[error(
        "job {job}: secret {entry:?} is not NAME or VAR=NAME (letters, digits and '_', not starting with a digit)"
    )]
    SecretName { job: String, entry: String },
    #[error("job {job}: variable {var} is given twice, by {first:?} and {second:?}")]
    SecretTwice {
        job: String,
        var: String,
        first: String,
        second: String,
    },
    #[error(
        "job {job}: host {host:?} is not a host name (letters, digits, '-', '_' and '.', as `stead hosts` lists them)"
    )]
    Host { job: String, host: String },
    #[error("job {job}: the command contains a NUL byte")]
    NulInCommand { job: String },
    #[error("job {job}: alternative {index} is empty")]
    EmptyAlternative { job: String, index: usize },
    #[error("job {job}: {field} is empty")]
    EmptyHook { job: String, field: &'static str },
    #[error("job {job}: catch_up_window {window:?} is longer than the longest allowed (366d)")]
    WindowTooLong { job: String, window: String },
    #[error("job {job}: {field} contains a NUL byte")]
    Nul { job: String, field: &'static str },
    #[error("job {job}: keep_runs must be at least 1 (the latest run is always kept)")]
    KeepNoRuns { job: String },
    #[error("job {job}: retries {retries} is more than the most allowed ({MAX_RETRIES})")]
    TooManyRetries { job: String, retries: u32 },
    #[error("job {job}: retry_delay {delay:?} is longer than retry_max_delay {max}")]
    RetryDelays {
        job: String,
        delay: String,
        max: String,
    },
    #[error("job {job}: after {name:?} is not a job name")]
    AfterName { job: String, name: String },
    #[error("job {job}: it cannot run after itself")]
    AfterItself { job: String },
    #[error(
        "job {job}: queue {name:?} is not a queue name (1 to 64 letters, digits, '-', '_' or '.')"
    )]
    QueueName { job: String, name: String },
    #[error("job {job}: network_check {check:?} is not HOST:PORT (such as \"example.org:443\")")]
    NetworkCheck { job: String, check: String },
    #[error("job {job}: {field} needs needs_network = true")]
    NetworkUnneeded { job: String, field: &'static str },
    #[error("job {job}: jitter_fixed needs a jitter")]
    FixedWithoutJitter { job: String },
}

/// The most retries a job may ask for: beyond this, a failure is a job that needs a
/// person, not more attempts.
pub const MAX_RETRIES: u32 = 100;

/// The first retry's delay when a job gives none.
pub const DEFAULT_RETRY_DELAY: &str = "30s";

/// The longest delay between retries when a job gives none.
pub const DEFAULT_RETRY_MAX_DELAY: &str = "1h";

/// The first of a spec's free-text fields that holds a NUL byte, which no path, zone,
/// duration or host name can contain (the command and the environment are checked with
/// their own messages).
fn nul_field(spec: &JobSpec) -> Option<&'static str> {
    let single = [
        ("cron", &spec.cron),
        ("tz", &spec.tz),
        ("every", &spec.every),
        ("cwd", &spec.cwd),
        ("timeout", &spec.timeout),
        ("expect_within", &spec.expect_within),
        ("keep_for", &spec.keep_for),
        ("retry_delay", &spec.retry_delay),
        ("retry_max_delay", &spec.retry_max_delay),
        ("queue", &spec.queue),
        ("catch_up_window", &spec.catch_up_window),
        ("on_failure", &spec.on_failure),
        ("landed_check", &spec.landed_check),
        ("network_check", &spec.network_check),
        ("network_wait", &spec.network_wait),
        ("jitter", &spec.jitter),
    ];
    let lists = [
        ("depends_on", &spec.depends_on),
        ("hosts", &spec.hosts),
        ("after", &spec.after),
    ];
    let in_single = single
        .into_iter()
        .find(|(_, value)| value.as_deref().is_some_and(|v| v.contains('\0')))
        .map(|(field, _)| field);
    in_single.or_else(|| {
        lists
            .into_iter()
            .find(|(_, values)| values.iter().any(|v| v.contains('\0')))
            .map(|(field, _)| field)
    })
}

/// The longest catch-up window: beyond a year, "missed" fires are history anyway.
const MAX_WINDOW: std::time::Duration = std::time::Duration::from_secs(366 * 24 * 3600);

/// Checks `spec` and returns it normalized.
pub fn validate(mut spec: JobSpec) -> Result<JobSpec, JobError> {
    if !valid_name(&spec.name) {
        return Err(JobError::Name(spec.name));
    }
    let job = spec.name.clone();
    if let Some(field) = nul_field(&spec) {
        return Err(JobError::Nul { job, field });
    }
    let sched = |source| JobError::Schedule {
        job: job.clone(),
        source,
    };
    match (&spec.cron, &spec.every) {
        (Some(_), Some(_)) => return Err(JobError::TwoSchedules { job }),
        (Some(expr), None) => {
            let zone = spec.tz.clone().unwrap_or_else(schedule::machine_zone);
            let cron = CronSchedule::parse(expr, &zone).map_err(sched)?;
            spec.cron = Some(cron.expr().to_string());
            spec.tz = Some(cron.zone_name().to_string());
        }
        (None, every) => {
            if let Some(tz) = &spec.tz {
                return Err(JobError::ZoneWithoutCron {
                    job,
                    tz: tz.clone(),
                });
            }
            if let Some(every) = every {
                spec.every = Some(IntervalSchedule::parse(every).map_err(sched)?.to_string());
            }
        }
    }
    canonical(&job, &mut spec.timeout)?;
    canonical(&job, &mut spec.expect_within)?;
    canonical(&job, &mut spec.keep_for)?;
    if spec.keep_runs == Some(0) {
        return Err(JobError::KeepNoRuns { job });
    }
    validate_retries(&mut spec)?;
    validate_conditions(&mut spec)?;
    if let Some(name) = spec.after.iter().find(|a| !valid_name(a)) {
        return Err(JobError::AfterName {
            job,
            name: name.clone(),
        });
    }
    if spec.after.contains(&job) {
        return Err(JobError::AfterItself { job });
    }
    spec.after.dedup();
    if let Some(queue) = spec.queue.as_ref().filter(|q| !valid_name(q)) {
        return Err(JobError::QueueName {
            job,
            name: queue.clone(),
        });
    }
    if spec.command.is_empty() || spec.command.iter().all(|w| w.trim().is_empty()) {
        return Err(JobError::EmptyCommand { job });
    }
    if spec.shell && spec.command.len() != 1 {
        return Err(JobError::ShellWords {
            job,
            count: spec.command.len(),
        });
    }
    if spec.command.iter().any(|w| w.contains('\0')) {
        return Err(JobError::NulInCommand { job });
    }
    for (i, alt) in spec.alternatives.iter().enumerate() {
        if alt.iter().all(|w| w.trim().is_empty()) {
            return Err(JobError::EmptyAlternative { job, index: i + 1 });
        }
        if spec.shell && alt.len() != 1 {
            return Err(JobError::ShellWords {
                job,
                count: alt.len(),
            });
        }
        if alt.iter().any(|w| w.contains('\0')) {
            return Err(JobError::NulInCommand { job });
        }
    }
    for (field, hook) in [
        ("on_failure", &spec.on_failure),
        ("landed_check", &spec.landed_check),
    ] {
        match hook {
            Some(cmd) if cmd.trim().is_empty() => {
                return Err(JobError::EmptyHook { job, field });
            }
            Some(cmd) if cmd.contains('\0') => return Err(JobError::NulInCommand { job }),
            _ => {}
        }
    }
    if let Some(window) = &spec.catch_up_window {
        let d = schedule::parse_duration(window).map_err(|e| sched(e.into()))?;
        if d > MAX_WINDOW {
            return Err(JobError::WindowTooLong {
                job,
                window: window.clone(),
            });
        }
        spec.catch_up_window = Some(schedule::format_duration(d));
    }
    if let Some(cwd) = &spec.cwd
        && !cwd.starts_with('/')
    {
        return Err(JobError::RelativeCwd {
            job,
            cwd: cwd.clone(),
        });
    }
    if let Some(host) = spec
        .hosts
        .iter()
        .find(|h| h.is_empty() || h.len() > 255 || !h.chars().all(valid_host_char))
    {
        return Err(JobError::Host {
            job,
            host: host.clone(),
        });
    }
    validate_secrets(&spec)?;
    for (name, value) in &spec.env {
        if !stead_protocol::valid_variable_name(name) {
            return Err(JobError::EnvName {
                job,
                name: name.clone(),
            });
        }
        if value.contains('\0') {
            return Err(JobError::EnvValue {
                job,
                name: name.clone(),
            });
        }
    }
    Ok(spec)
}

/// Checks the `secrets` entries: each `NAME` or `VAR=NAME`, each variable given once (by
/// the secrets, or by them and `env`), none of stead's own `STEAD_*` run variables.
fn validate_secrets(spec: &JobSpec) -> Result<(), JobError> {
    let job = || spec.name.clone();
    let mut given: std::collections::BTreeMap<&str, &str> = std::collections::BTreeMap::new();
    for entry in &spec.secrets {
        let (var, name) = stead_protocol::secret_binding(entry);
        let valid = stead_protocol::valid_secret_name;
        if !valid(var) || !valid(name) || var.starts_with("STEAD_") {
            return Err(JobError::SecretName {
                job: job(),
                entry: entry.clone(),
            });
        }
        let first = match (given.insert(var, entry), spec.env.contains_key(var)) {
            (Some(first), _) => first.to_string(),
            (None, true) => format!("env {var}"),
            (None, false) => continue,
        };
        return Err(JobError::SecretTwice {
            job: job(),
            var: var.to_string(),
            first,
            second: entry.clone(),
        });
    }
    Ok(())
}

/// Checks what runs need of the machine and when fires start, writing durations in
/// canonical form.
fn validate_conditions(spec: &mut JobSpec) -> Result<(), JobError> {
    let job = spec.name.clone();
    for (field, given) in [
        ("network_check", spec.network_check.is_some()),
        ("network_wait", spec.network_wait.is_some()),
    ] {
        if given && !spec.needs_network {
            return Err(JobError::NetworkUnneeded { job, field });
        }
    }
    if let Some(check) = &spec.network_check
        && !valid_host_port(check)
    {
        return Err(JobError::NetworkCheck {
            job,
            check: check.clone(),
        });
    }
    canonical(&job, &mut spec.network_wait)?;
    if spec.jitter_fixed && spec.jitter.is_none() {
        return Err(JobError::FixedWithoutJitter { job });
    }
    canonical(&job, &mut spec.jitter)?;
    Ok(())
}

/// A duration field of job `job`, checked and written as it reads back (`300s` is `5m`).
fn canonical(job: &str, field: &mut Option<String>) -> Result<(), JobError> {
    if let Some(given) = field {
        let d = schedule::parse_duration(given).map_err(|e| JobError::Schedule {
            job: job.to_string(),
            source: e.into(),
        })?;
        *given = schedule::format_duration(d);
    }
    Ok(())
}

/// `HOST:PORT` with a non-empty host (a name, an IPv4 address or a bracketed IPv6 one)
/// and a port from 1 to 65535.
fn valid_host_port(text: &str) -> bool {
    let Some((host, port)) = text.rsplit_once(':') else {
        return false;
    };
    let host = host
        .strip_prefix('[')
        .and_then(|h| h.strip_suffix(']'))
        .unwrap_or(host);
    !host.is_empty()
        && !host.contains(char::is_whitespace)
        && port.parse::<u16>().is_ok_and(|p| p > 0)
}

/// Checks the retry fields and writes their delays in canonical form.
fn validate_retries(spec: &mut JobSpec) -> Result<(), JobError> {
    let job = spec.name.clone();
    if spec.retries > MAX_RETRIES {
        return Err(JobError::TooManyRetries {
            job,
            retries: spec.retries,
        });
    }
    let parse = |value: &Option<String>| -> Result<Option<_>, JobError> {
        value
            .as_deref()
            .map(schedule::parse_delay)
            .transpose()
            .map_err(|e| JobError::Schedule {
                job: job.clone(),
                source: e.into(),
            })
    };
    let delay = parse(&spec.retry_delay)?;
    let max = parse(&spec.retry_max_delay)?;
    // A first delay past the longest (given, or the default) would be cut silently.
    let longest = max.unwrap_or_else(|| {
        schedule::parse_delay(DEFAULT_RETRY_MAX_DELAY).expect("the default parses")
    });
    if let Some(d) = delay
        && d > longest
    {
        return Err(JobError::RetryDelays {
            job,
            delay: spec.retry_delay.clone().unwrap_or_default(),
            max: match &spec.retry_max_delay {
                Some(given) => format!("{given:?}"),
                None => format!("{DEFAULT_RETRY_MAX_DELAY:?} (the default; set retry_max_delay)"),
            },
        });
    }
    spec.retry_delay = delay.map(schedule::format_delay);
    spec.retry_max_delay = max.map(schedule::format_delay);
    Ok(())
}

/// Whether `name` is a valid job, service or hold name.
pub fn valid_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphanumeric())
        && name.len() <= 64
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

/// What a host name (`STEAD_HOST_NAME`, a system host name) is made of.
fn valid_host_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.')
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    fn spec(name: &str) -> JobSpec {
        JobSpec {
            name: name.into(),
            cron: None,
            tz: None,
            every: None,
            command: vec!["true".into()],
            shell: false,
            cwd: None,
            env: BTreeMap::new(),
            timeout: None,
            concurrency: Default::default(),
            enabled: true,
            ..JobSpec::default()
        }
    }

    fn refused(f: impl FnOnce(&mut JobSpec)) -> String {
        let mut s = spec("job");
        f(&mut s);
        validate(s).unwrap_err().to_string()
    }

    #[test]
    fn conditions_are_checked_and_their_durations_written_alike() {
        let v = validate(JobSpec {
            needs_network: true,
            network_check: Some("[::1]:443".into()),
            network_wait: Some("90s".into()),
            jitter: Some("300s".into()),
            jitter_fixed: true,
            ..spec("sync")
        })
        .unwrap();
        assert_eq!(v.network_wait.as_deref(), Some("1m30s"));
        assert_eq!(v.jitter.as_deref(), Some("5m"));
        for (change, message) in [
            (
                Box::new(|s: &mut JobSpec| s.network_check = Some("example.org:443".into()))
                    as Box<dyn FnOnce(&mut JobSpec)>,
                "job job: network_check needs needs_network = true",
            ),
            (
                Box::new(|s| s.network_wait = Some("1m".into())),
                "job job: network_wait needs needs_network = true",
            ),
            (
                Box::new(|s| {
                    s.needs_network = true;
                    s.network_check = Some("example.org".into())
                }),
                "job job: network_check \"example.org\" is not HOST:PORT",
            ),
            (
                Box::new(|s| {
                    s.needs_network = true;
                    s.network_check = Some(":443".into())
                }),
                "job job: network_check \":443\" is not HOST:PORT",
            ),
            (
                Box::new(|s| {
                    s.needs_network = true;
                    s.network_check = Some("host:0".into())
                }),
                "job job: network_check \"host:0\" is not HOST:PORT",
            ),
            (
                Box::new(|s| {
                    s.needs_network = true;
                    s.network_wait = Some("soon".into())
                }),
                "\"soon\"",
            ),
            (
                Box::new(|s| s.jitter_fixed = true),
                "job job: jitter_fixed needs a jitter",
            ),
            (Box::new(|s| s.jitter = Some("-1m".into())), "\"-1m\""),
        ] {
            let err = refused(change);
            assert!(err.contains(message), "{err} (expected {message})");
        }
    }

    #[test]
    fn normalizes_zone_and_durations() {
        let mut s = spec("daily.journal");
        s.cron = Some("0 20 * * *".into());
        s.tz = Some("europe/berlin".into());
        s.keep_for = Some("720h".into());
        s.timeout = Some("90m".into());
        s.expect_within = Some("1560m".into());
        let v = validate(s).unwrap();
        assert_eq!(v.tz.as_deref(), Some("Europe/Berlin"));
        assert_eq!(v.timeout.as_deref(), Some("1h30m"));
        assert_eq!(v.expect_within.as_deref(), Some("1d2h"));

        let mut s = spec("local");
        s.cron = Some("@hourly".into());
        assert_eq!(
            validate(s).unwrap().tz,
            Some(crate::schedule::machine_zone())
        );
    }

    #[test]
    fn errors_name_the_field_and_the_value() {
        type Change = Box<dyn FnOnce(&mut JobSpec)>;
        let cases: Vec<(Change, &str)> = vec![
            (
                Box::new(|s| s.name = "-bad".into()),
                "invalid job name \"-bad\"",
            ),
            (Box::new(|s| s.name = "".into()), "invalid job name \"\""),
            (
                Box::new(|s| s.name = "a b".into()),
                "invalid job name \"a b\"",
            ),
            (Box::new(|s| s.name = "x".repeat(65)), "invalid job name"),
            (
                Box::new(|s| s.hosts = vec!["laptop".into(), "a b".into()]),
                "host \"a b\" is not a host name",
            ),
            (Box::new(|s| s.hosts = vec![String::new()]), "host \"\""),
            (
                Box::new(|s| s.secrets = vec!["GH=".into()]),
                "secret \"GH=\" is not NAME or VAR=NAME",
            ),
            (
                Box::new(|s| s.secrets = vec!["1TOKEN".into()]),
                "secret \"1TOKEN\"",
            ),
            (
                Box::new(|s| s.secrets = vec!["STEAD_JOB=X".into()]),
                "secret \"STEAD_JOB=X\"",
            ),
            (
                Box::new(|s| s.secrets = vec!["A".into(), "A=B".into()]),
                "variable A is given twice, by \"A\" and \"A=B\"",
            ),
            (
                Box::new(|s| {
                    s.env.insert("GH".into(), "x".into());
                    s.secrets = vec!["GH=GITHUB_TOKEN".into()]
                }),
                "variable GH is given twice, by \"env GH\"",
            ),
            (
                Box::new(|s| s.cron = Some("61 * * * *".into())),
                "minute field \"61\"",
            ),
            (
                Box::new(|s| {
                    s.cron = Some("* * * * *".into());
                    s.tz = Some("Mars/Olympus".into())
                }),
                "unknown time zone \"Mars/Olympus\"",
            ),
            (
                Box::new(|s| {
                    s.cron = Some("* * * * *".into());
                    s.every = Some("5m".into())
                }),
                "either cron or every",
            ),
            (
                Box::new(|s| s.tz = Some("UTC".into())),
                "tz \"UTC\" needs a cron schedule",
            ),
            (Box::new(|s| s.every = Some("soon".into())), "\"soon\""),
            (Box::new(|s| s.timeout = Some("-3s".into())), "\"-3s\""),
            (Box::new(|s| s.command = vec![]), "the command is empty"),
            (
                Box::new(|s| {
                    s.shell = true;
                    s.command = vec!["echo".into(), "hi".into()]
                }),
                "one script string (got 2 words)",
            ),
            (
                Box::new(|s| s.cwd = Some("relative/dir".into())),
                "cwd \"relative/dir\" is not an absolute path",
            ),
            (
                Box::new(|s| {
                    s.env.insert("1BAD".into(), "x".into());
                }),
                "env name \"1BAD\"",
            ),
            (
                Box::new(|s| s.alternatives = vec![vec!["ok".into()], vec![" ".into()]]),
                "alternative 2 is empty",
            ),
            (
                Box::new(|s| s.on_failure = Some("  ".into())),
                "on_failure is empty",
            ),
            (
                Box::new(|s| s.catch_up_window = Some("forever".into())),
                "\"forever\"",
            ),
            (
                Box::new(|s| s.catch_up_window = Some("10000000d".into())),
                "longer than the longest allowed",
            ),
        ];
        for (change, expected) in cases {
            let message = refused(change);
            assert!(message.contains(expected), "{message:?} lacks {expected:?}");
        }
    }

    #[test]
    fn a_nul_byte_in_any_field_is_refused_by_name() {
        let nul = || Some("a\0b".to_string());
        let cases: Vec<(JobSpec, &str)> = vec![
            (
                JobSpec {
                    cwd: nul(),
                    ..spec("j")
                },
                "cwd",
            ),
            (
                JobSpec {
                    tz: nul(),
                    cron: Some("0 * * * *".into()),
                    ..spec("j")
                },
                "tz",
            ),
            (
                JobSpec {
                    cron: nul(),
                    ..spec("j")
                },
                "cron",
            ),
            (
                JobSpec {
                    every: nul(),
                    ..spec("j")
                },
                "every",
            ),
            (
                JobSpec {
                    timeout: nul(),
                    ..spec("j")
                },
                "timeout",
            ),
            (
                JobSpec {
                    catch_up_window: nul(),
                    ..spec("j")
                },
                "catch_up_window",
            ),
            (
                JobSpec {
                    on_failure: nul(),
                    ..spec("j")
                },
                "on_failure",
            ),
            (
                JobSpec {
                    landed_check: nul(),
                    ..spec("j")
                },
                "landed_check",
            ),
            (
                JobSpec {
                    depends_on: vec!["a\0b".into()],
                    ..spec("j")
                },
                "depends_on",
            ),
            (
                JobSpec {
                    hosts: vec!["a\0b".into()],
                    ..spec("j")
                },
                "hosts",
            ),
        ];
        for (spec, field) in cases {
            assert_eq!(
                validate(spec).unwrap_err(),
                JobError::Nul {
                    job: "j".into(),
                    field
                },
                "{field}"
            );
        }
    }
}
