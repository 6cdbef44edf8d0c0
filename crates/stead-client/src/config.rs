//! Configuration: `DIR/config.toml`, overridden by `STEAD_*` environment variables.
//!
//! Every timing has the production default of the lifecycle design; tests shorten them
//! through the environment so whole lifecycles run in milliseconds. Unknown keys are
//! errors rather than silently ignored, so a typo never leaves a default in force.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;
use stead_protocol::KeepFree;

/// The lifecycle timings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timings {
    /// How long a lease stays valid for takeover arbitration after its last renewal.
    pub lease: Duration,
    /// How often the server renews its lease.
    pub heartbeat: Duration,
    /// How long a probe waits for a hello before calling a holder "not serving".
    pub probe_timeout: Duration,
    /// How long a client waits for a server to become ready, across all its spawns.
    pub start_timeout: Duration,
    /// How long after it begins serving a server waits before resuming cut runs.
    pub resume_delay: Duration,
    /// A cut run older than this is history, not debt: it is not resumed.
    pub resume_max_age: Duration,
    /// How long before its instant a fire on time is admitted and its monitor readied,
    /// so that its command starts on the instant (more for a burst: each fire due at the
    /// same instant adds [`FIRE_LEAD_PER_FIRE`], up to [`FIRE_LEAD_MAX`]).
    pub fire_lead: Duration,
}

/// What each fire due at the same instant adds to [`Timings::fire_lead`]: readying one
/// monitor while hundreds of others are readied takes about 1.2 ms of a 2-core machine
/// (fork, log, connection), and the rest is room. With 0.6 ms a thousand fires at one
/// minute were admitted 0.59 s ahead and their last monitor marked its run 0.83 s after
/// the minute; with 2 s of lead all were marked within 52 ms of it.
pub const FIRE_LEAD_PER_FIRE: Duration = Duration::from_millis(2);
/// The most a fire is admitted ahead of its instant.
pub const FIRE_LEAD_MAX: Duration = Duration::from_secs(2);

impl Default for Timings {
    fn default() -> Self {
        Self {
            lease: Duration::from_millis(30_000),
            heartbeat: Duration::from_millis(10_000),
            probe_timeout: Duration::from_millis(500),
            start_timeout: Duration::from_millis(10_000),
            resume_delay: Duration::from_millis(5_000),
            resume_max_age: Duration::from_secs(6 * 3600),
            fire_lead: Duration::from_millis(20),
        }
    }
}

/// The HTTP API (off unless `listen` is set).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HttpConfig {
    /// Where it listens: a loopback address unless `allow_remote`.
    pub listen: Option<SocketAddr>,
    /// Permits a non-loopback `listen` address. Unsafe: the token is then all that stands
    /// between the network and your jobs, and it travels in clear text.
    pub allow_remote: bool,
    /// How long a connection may take to send a request's headers, and how long it may
    /// sit idle between requests, before it is closed.
    pub idle_timeout: Duration,
}

impl Default for HttpConfig {
    fn default() -> Self {
        Self {
            listen: None,
            allow_remote: false,
            idle_timeout: DEFAULT_HTTP_IDLE_TIMEOUT,
        }
    }
}

/// The default of [`HttpConfig::idle_timeout`].
pub const DEFAULT_HTTP_IDLE_TIMEOUT: Duration = Duration::from_secs(10);

/// Overrides `[http] idle_timeout_ms` (tests).
pub const HTTP_IDLE_TIMEOUT_ENV: &str = "STEAD_HTTP_IDLE_TIMEOUT_MS";

impl HttpConfig {
    /// Checks an address against the loopback rule.
    pub fn checked(listen: SocketAddr, allow_remote: bool) -> Result<Self, ConfigError> {
        if !listen.ip().is_loopback() && !allow_remote {
            return Err(ConfigError::Http(format!(
                "the HTTP API listens on loopback addresses only ({listen} is not one); \
                 use 127.0.0.1:{port}, or pass --http-allow-remote (unsafe: anyone who can \
                 reach the port and read the token drives your jobs, over clear text)",
                port = listen.port()
            )));
        }
        Ok(Self {
            listen: Some(listen),
            allow_remote,
            ..Self::default()
        })
    }
}

/// Parses a listen address: `IP:PORT`, `[IPv6]:PORT` or `localhost:PORT`.
pub fn parse_listen(text: &str) -> Result<SocketAddr, ConfigError> {
    let text = text.trim();
    if let Some(port) = text.strip_prefix("localhost:")
        && let Ok(port) = port.parse::<u16>()
    {
        return Ok(SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), port));
    }
    text.parse().map_err(|_| {
        ConfigError::Http(format!(
            "invalid HTTP listen address {text:?}: expected IP:PORT, such as 127.0.0.1:8765"
        ))
    })
}

/// Run logs (`[logs]`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LogsConfig {
    /// The free space kept on the file system holding the logs: a run's output stops
    /// being written below it, so the ledger beside them always has room to record.
    pub keep_free: KeepFree,
}

/// Overrides `[logs] keep_free`.
pub const KEEP_FREE_ENV: &str = "STEAD_LOGS_KEEP_FREE";
/// How much history the server keeps (`[retention]`); the rules are in `docs/ledger.md`,
/// "Retention".
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Retention {
    /// Runs older than this are pruned (row and log), unless their job says otherwise
    /// (`keep_for`, `keep_runs`) or the run is never pruned.
    pub runs_max_age: Duration,
    /// Run logs older than this are deleted; the row is kept and says so.
    pub logs_max_age: Duration,
    /// At most this many bytes of run logs are kept on a host; the oldest go first.
    pub logs_max_total: u64,
    /// How often the server prunes (it also prunes once when it starts).
    pub interval: Duration,
}

impl Default for Retention {
    fn default() -> Self {
        Self {
            runs_max_age: Duration::from_secs(400 * 24 * 3600),
            logs_max_age: Duration::from_secs(30 * 24 * 3600),
            logs_max_total: 1 << 30,
            interval: Duration::from_secs(3600),
        }
    }
}

/// Runs at once on this host (`[queues]`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct QueuesConfig {
    /// At most this many runs of jobs that name no queue at once (`default_parallel`);
    /// `None`: no limit. A job's own queue (`stead queue set`) has its own limit.
    pub default_parallel: Option<u32>,
}

/// Everything configurable.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Config {
    pub timings: Timings,
    pub http: HttpConfig,
    pub logs: LogsConfig,
    pub retention: Retention,
    pub queues: QueuesConfig,
    /// A `postgres://` ledger shared by several hosts; `None`: the state directory's own
    /// SQLite file.
    pub store_url: Option<String>,
}

/// Overrides `[store] url` (a cluster's hosts, tests).
pub const STORE_URL_ENV: &str = "STEAD_STORE_URL";

/// Checks a store URL's scheme: only PostgreSQL is shared.
pub fn checked_store_url(url: &str) -> Result<String, ConfigError> {
    let url = url.trim();
    if url.starts_with("postgres://") || url.starts_with("postgresql://") {
        Ok(url.to_string())
    } else {
        Err(ConfigError::Store(format!(
            "expected a postgres:// URL (such as postgres://stead@db.lan/stead), not {:?}; \
             leave it out to keep the ledger in the state directory",
            stead_protocol::redact_url(url)
        )))
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("failed to read {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("invalid config file {path}: {message}")]
    Parse { path: PathBuf, message: String },
    #[error("invalid {name}={value:?}: expected a whole number of milliseconds")]
    Env { name: &'static str, value: String },
    #[error("invalid timings: {0}")]
    Inconsistent(String),
    #[error("invalid HTTP setting: {0}")]
    Http(String),
    #[error("invalid store setting: {0}")]
    Store(String),
    #[error("invalid logs setting: {0}")]
    Logs(String),
    #[error("invalid retention setting: {0}")]
    Retention(String),
    #[error("invalid queues setting: {0}")]
    Queues(String),
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    #[serde(default)]
    timings: TimingsFile,
    #[serde(default)]
    http: HttpFile,
    #[serde(default)]
    store: StoreFile,
    #[serde(default)]
    logs: LogsFile,
    #[serde(default)]
    retention: RetentionFile,
    #[serde(default)]
    queues: QueuesFile,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct QueuesFile {
    default_parallel: Option<u32>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct LogsFile {
    keep_free: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RetentionFile {
    runs_max_age_ms: Option<u64>,
    logs_max_age_ms: Option<u64>,
    logs_max_total_bytes: Option<u64>,
    interval_ms: Option<u64>,
}

/// One overridable retention setting: its environment variable, its config key and
/// where it goes.
struct RetentionKnob {
    env: &'static str,
    key: &'static str,
    file: fn(&RetentionFile) -> Option<u64>,
    set: fn(&mut Retention, u64),
}

const RETENTION_KNOBS: &[RetentionKnob] = &[
    RetentionKnob {
        env: "STEAD_RETENTION_RUNS_MAX_AGE_MS",
        key: "runs_max_age_ms",
        file: |f| f.runs_max_age_ms,
        set: |r, v| r.runs_max_age = Duration::from_millis(v),
    },
    RetentionKnob {
        env: "STEAD_RETENTION_LOGS_MAX_AGE_MS",
        key: "logs_max_age_ms",
        file: |f| f.logs_max_age_ms,
        set: |r, v| r.logs_max_age = Duration::from_millis(v),
    },
    RetentionKnob {
        env: "STEAD_RETENTION_LOGS_MAX_TOTAL_BYTES",
        key: "logs_max_total_bytes",
        file: |f| f.logs_max_total_bytes,
        set: |r, v| r.logs_max_total = v,
    },
    RetentionKnob {
        env: "STEAD_RETENTION_INTERVAL_MS",
        key: "interval_ms",
        file: |f| f.interval_ms,
        set: |r, v| r.interval = Duration::from_millis(v),
    },
];

/// Reads `[retention]` with its environment overrides. Every value must be greater than
/// zero: a limit of zero would prune everything it may the moment the server starts.
fn retention(
    file: &RetentionFile,
    env: &impl Fn(&str) -> Option<String>,
) -> Result<Retention, ConfigError> {
    let mut retention = Retention::default();
    for knob in RETENTION_KNOBS {
        let value = match env(knob.env).filter(|v| !v.is_empty()) {
            Some(raw) => Some(raw.trim().parse::<u64>().map_err(|_| ConfigError::Env {
                name: knob.env,
                value: raw.clone(),
            })?),
            None => (knob.file)(file),
        };
        if let Some(value) = value {
            if value == 0 {
                return Err(ConfigError::Retention(format!(
                    "{} must be greater than zero",
                    knob.key
                )));
            }
            (knob.set)(&mut retention, value);
        }
    }
    Ok(retention)
}

/// `[queues]`, with `STEAD_QUEUES_DEFAULT_PARALLEL` over the file.
fn queues(
    file: &QueuesFile,
    env: &impl Fn(&str) -> Option<String>,
) -> Result<QueuesConfig, ConfigError> {
    const ENV: &str = "STEAD_QUEUES_DEFAULT_PARALLEL";
    let default_parallel = match env(ENV).filter(|v| !v.is_empty()) {
        Some(raw) => Some(raw.trim().parse::<u32>().map_err(|_| {
            ConfigError::Queues(format!("{ENV}={raw:?}: expected a whole number of runs"))
        })?),
        None => file.default_parallel,
    };
    if default_parallel == Some(0) {
        return Err(ConfigError::Queues(
            "default_parallel must be at least 1 (leave it out for no limit)".into(),
        ));
    }
    Ok(QueuesConfig { default_parallel })
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct StoreFile {
    url: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct HttpFile {
    listen: Option<String>,
    #[serde(default)]
    allow_remote: bool,
    idle_timeout_ms: Option<u64>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct TimingsFile {
    lease_ms: Option<u64>,
    heartbeat_ms: Option<u64>,
    probe_timeout_ms: Option<u64>,
    start_timeout_ms: Option<u64>,
    resume_delay_ms: Option<u64>,
    resume_max_age_ms: Option<u64>,
    fire_lead_ms: Option<u64>,
}

/// One overridable timing: its config key and environment variable.
struct Knob {
    env: &'static str,
    file: fn(&TimingsFile) -> Option<u64>,
    field: fn(&mut Timings) -> &mut Duration,
}

const KNOBS: &[Knob] = &[
    Knob {
        env: "STEAD_LEASE_MS",
        file: |f| f.lease_ms,
        field: |t| &mut t.lease,
    },
    Knob {
        env: "STEAD_HEARTBEAT_MS",
        file: |f| f.heartbeat_ms,
        field: |t| &mut t.heartbeat,
    },
    Knob {
        env: "STEAD_PROBE_TIMEOUT_MS",
        file: |f| f.probe_timeout_ms,
        field: |t| &mut t.probe_timeout,
    },
    Knob {
        env: "STEAD_START_TIMEOUT_MS",
        file: |f| f.start_timeout_ms,
        field: |t| &mut t.start_timeout,
    },
    Knob {
        env: "STEAD_RESUME_DELAY_MS",
        file: |f| f.resume_delay_ms,
        field: |t| &mut t.resume_delay,
    },
    Knob {
        env: "STEAD_RESUME_MAX_AGE_MS",
        file: |f| f.resume_max_age_ms,
        field: |t| &mut t.resume_max_age,
    },
    Knob {
        env: "STEAD_FIRE_LEAD_MS",
        file: |f| f.fire_lead_ms,
        field: |t| &mut t.fire_lead,
    },
];

impl Config {
    /// Loads `config.toml` from the state directory (absent means defaults) and applies
    /// environment overrides from the process environment.
    pub fn load(path: &Path) -> Result<Self, ConfigError> {
        Self::load_with(path, |name| std::env::var(name).ok())
    }

    /// Like [`Config::load`] with an injected environment lookup.
    pub fn load_with(
        path: &Path,
        env: impl Fn(&str) -> Option<String>,
    ) -> Result<Self, ConfigError> {
        let file = match std::fs::read_to_string(path) {
            Ok(text) => toml::from_str::<File>(&text).map_err(|e| ConfigError::Parse {
                path: path.to_path_buf(),
                message: e.message().to_string(),
            })?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => File::default(),
            Err(source) => {
                return Err(ConfigError::Read {
                    path: path.to_path_buf(),
                    source,
                });
            }
        };
        let mut timings = Timings::default();
        for knob in KNOBS {
            let value = match env(knob.env).filter(|v| !v.is_empty()) {
                Some(raw) => Some(raw.trim().parse::<u64>().map_err(|_| ConfigError::Env {
                    name: knob.env,
                    value: raw.clone(),
                })?),
                None => (knob.file)(&file.timings),
            };
            if let Some(ms) = value {
                *(knob.field)(&mut timings) = Duration::from_millis(ms);
            }
        }
        validate(&timings)?;
        let mut http = match &file.http.listen {
            Some(listen) => HttpConfig::checked(parse_listen(listen)?, file.http.allow_remote)?,
            None => HttpConfig::default(),
        };
        let idle_ms = match env(HTTP_IDLE_TIMEOUT_ENV).filter(|v| !v.is_empty()) {
            Some(raw) => Some(raw.trim().parse::<u64>().map_err(|_| ConfigError::Env {
                name: HTTP_IDLE_TIMEOUT_ENV,
                value: raw.clone(),
            })?),
            None => file.http.idle_timeout_ms,
        };
        if let Some(ms) = idle_ms {
            if ms == 0 {
                return Err(ConfigError::Http(
                    "idle_timeout_ms must be greater than zero".into(),
                ));
            }
            http.idle_timeout = Duration::from_millis(ms);
        }
        let store_url = env(STORE_URL_ENV)
            .filter(|v| !v.trim().is_empty())
            .or(file.store.url)
            .map(|url| checked_store_url(&url))
            .transpose()?;
        let keep_free = env(KEEP_FREE_ENV)
            .filter(|v| !v.trim().is_empty())
            .or(file.logs.keep_free)
            .map(|text| KeepFree::parse(&text).map_err(ConfigError::Logs))
            .transpose()?
            .unwrap_or_default();
        let retention = retention(&file.retention, &env)?;
        let queues = queues(&file.queues, &env)?;
        Ok(Self {
            timings,
            http,
            logs: LogsConfig { keep_free },
            retention,
            queues,
            store_url,
        })
    }
}

fn validate(t: &Timings) -> Result<(), ConfigError> {
    if t.heartbeat.is_zero() || t.lease.is_zero() {
        return Err(ConfigError::Inconsistent(
            "lease and heartbeat must be greater than zero".into(),
        ));
    }
    if t.heartbeat >= t.lease {
        return Err(ConfigError::Inconsistent(format!(
            "heartbeat ({} ms) must be shorter than the lease ({} ms), or the lease lapses between renewals",
            t.heartbeat.as_millis(),
            t.lease.as_millis()
        )));
    }
    if t.fire_lead > FIRE_LEAD_MAX {
        return Err(ConfigError::Inconsistent(format!(
            "fire_lead_ms ({}) may be at most {} ms",
            t.fire_lead.as_millis(),
            FIRE_LEAD_MAX.as_millis()
        )));
    }
    if t.probe_timeout.is_zero() || t.start_timeout.is_zero() {
        return Err(ConfigError::Inconsistent(
            "probe and start timeouts must be greater than zero".into(),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load(toml: Option<&str>, env: &[(&str, &str)]) -> Result<Config, ConfigError> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        if let Some(text) = toml {
            std::fs::write(&path, text).unwrap();
        }
        Config::load_with(&path, |name| {
            env.iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| v.to_string())
        })
    }

    #[test]
    fn defaults_are_the_design_values() {
        let c = load(None, &[]).unwrap();
        assert_eq!(c.timings.lease, Duration::from_secs(30));
        assert_eq!(c.timings.heartbeat, Duration::from_secs(10));
        assert_eq!(c.timings.probe_timeout, Duration::from_millis(500));
        assert_eq!(c.timings.start_timeout, Duration::from_secs(10));
    }

    #[test]
    fn file_sets_and_env_overrides() {
        let c = load(
            Some("[timings]\nlease_ms = 4000\nheartbeat_ms = 1000\n"),
            &[("STEAD_HEARTBEAT_MS", "500")],
        )
        .unwrap();
        assert_eq!(c.timings.lease, Duration::from_millis(4000));
        assert_eq!(c.timings.heartbeat, Duration::from_millis(500));
    }

    #[test]
    fn typos_and_bad_values_are_errors() {
        let err = load(Some("[timings]\nlease = 4000\n"), &[]).unwrap_err();
        assert!(err.to_string().contains("unknown field `lease`"), "{err}");
        let err = load(None, &[("STEAD_LEASE_MS", "30s")]).unwrap_err();
        assert!(err.to_string().contains("STEAD_LEASE_MS"), "{err}");
        let err = load(None, &[("STEAD_HEARTBEAT_MS", "40000")]).unwrap_err();
        assert!(err.to_string().contains("shorter than the lease"), "{err}");
    }

    #[test]
    fn the_logs_reserve_is_a_share_or_a_size() {
        assert_eq!(
            load(None, &[]).unwrap().logs.keep_free,
            KeepFree::Percent(5)
        );
        let c = load(Some("[logs]\nkeep_free = \"512MiB\"\n"), &[]).unwrap();
        assert_eq!(c.logs.keep_free, KeepFree::Bytes(512 << 20));
        let c = load(
            Some("[logs]\nkeep_free = \"512MiB\"\n"),
            &[("STEAD_LOGS_KEEP_FREE", "1%")],
        )
        .unwrap();
        assert_eq!(c.logs.keep_free, KeepFree::Percent(1));
        let err = load(Some("[logs]\nkeep_free = \"lots\"\n"), &[]).unwrap_err();
        assert!(err.to_string().contains("invalid keep_free"), "{err}");
    }

    #[test]
    fn the_hosts_default_queue_limit_is_off_unless_set_and_never_zero() {
        assert_eq!(load(None, &[]).unwrap().queues.default_parallel, None);
        let c = load(Some("[queues]\ndefault_parallel = 4\n"), &[]).unwrap();
        assert_eq!(c.queues.default_parallel, Some(4));
        let c = load(
            Some("[queues]\ndefault_parallel = 4\n"),
            &[("STEAD_QUEUES_DEFAULT_PARALLEL", "2")],
        )
        .unwrap();
        assert_eq!(c.queues.default_parallel, Some(2));
        for (file, env) in [
            (Some("[queues]\ndefault_parallel = 0\n"), vec![]),
            (None, vec![("STEAD_QUEUES_DEFAULT_PARALLEL", "many")]),
        ] {
            let err = load(file, &env).unwrap_err();
            assert!(
                err.to_string().starts_with("invalid queues setting: "),
                "{err}"
            );
        }
    }

    #[test]
    fn retention_has_defaults_a_section_and_env_overrides() {
        let r = load(None, &[]).unwrap().retention;
        assert_eq!(r.runs_max_age, Duration::from_secs(400 * 86400));
        assert_eq!(r.logs_max_age, Duration::from_secs(30 * 86400));
        assert_eq!(r.logs_max_total, 1 << 30);
        let r = load(
            Some("[retention]\nlogs_max_total_bytes = 4096\ninterval_ms = 60000\n"),
            &[("STEAD_RETENTION_INTERVAL_MS", "250")],
        )
        .unwrap()
        .retention;
        assert_eq!(r.logs_max_total, 4096);
        assert_eq!(r.interval, Duration::from_millis(250));
        let err = load(Some("[retention]\nruns_max_age = 1\n"), &[]).unwrap_err();
        assert!(
            err.to_string().contains("unknown field `runs_max_age`"),
            "{err}"
        );
        let err = load(Some("[retention]\nlogs_max_age_ms = 0\n"), &[]).unwrap_err();
        assert!(
            err.to_string()
                .contains("logs_max_age_ms must be greater than zero"),
            "{err}"
        );
    }

    #[test]
    fn http_listens_on_loopback_unless_remote_is_allowed() {
        let c = load(Some("[http]\nlisten = \"localhost:8765\"\n"), &[]).unwrap();
        assert_eq!(c.http.listen, Some("127.0.0.1:8765".parse().unwrap()));
        let c = load(Some("[http]\nlisten = \"[::1]:0\"\n"), &[]).unwrap();
        assert_eq!(c.http.listen, Some("[::1]:0".parse().unwrap()));
        assert_eq!(load(None, &[]).unwrap().http.listen, None);

        let err = load(Some("[http]\nlisten = \"0.0.0.0:8765\"\n"), &[]).unwrap_err();
        assert!(
            err.to_string().starts_with(
                "invalid HTTP setting: the HTTP API listens on loopback addresses only"
            ),
            "{err}"
        );
        let c = load(
            Some("[http]\nlisten = \"0.0.0.0:8765\"\nallow_remote = true\n"),
            &[],
        )
        .unwrap();
        assert!(c.http.allow_remote);

        let err = load(Some("[http]\nlisten = \"8765\"\n"), &[]).unwrap_err();
        assert!(err.to_string().contains("expected IP:PORT"), "{err}");
        let err = load(Some("[http]\nport = 1\n"), &[]).unwrap_err();
        assert!(err.to_string().contains("unknown field `port`"), "{err}");
    }
}
