//! Configuration: `DIR/config.toml`, overridden by `STEAD_*` environment variables.
//!
//! Every setting is one row of [`SETTINGS`] (`settings.rs`): its table and key in the
//! file, the key it had before it took units, its environment variable, what it accepts
//! and what it is for. The file is read (`file.rs`), the environment applied and
//! `docs/configuration.md` checked (`docs.rs`) from that table, so a setting is added in
//! one place. Durations and sizes are read by the command line's own parsers
//! (`value.rs`). Unknown keys are errors rather than silently ignored, so a typo never
//! leaves a default in force.
//!
//! Every timing has the production default of the lifecycle design; tests shorten them
//! through the environment so whole lifecycles run in milliseconds.

#[cfg(test)]
mod docs;
mod error;
mod file;
mod settings;
#[cfg(test)]
mod tests;
mod value;

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::Path;
use std::time::Duration;

use stead_protocol::KeepFree;
use stead_protocol::units::format_delay;

pub use error::ConfigError;
pub use settings::{SETTINGS, Setting};

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
    /// The catch-ups that come due at one wake start spread over this long (each at a
    /// delay of its own), not all in the same second.
    pub wake_spread: Duration,
    /// How long the spawner of monitors is kept with no run to start: then it exits, so
    /// an idle server holds no process but its own.
    pub spawner_idle: Duration,
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
            lease: Duration::from_secs(30),
            heartbeat: Duration::from_secs(10),
            probe_timeout: Duration::from_millis(500),
            start_timeout: Duration::from_secs(10),
            resume_delay: Duration::from_secs(5),
            resume_max_age: Duration::from_secs(6 * 3600),
            fire_lead: Duration::from_millis(20),
            wake_spread: Duration::from_secs(5),
            spawner_idle: Duration::from_secs(60),
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
            idle_timeout: Duration::from_secs(10),
        }
    }
}

/// What a listen address may be, for the messages that refuse one.
const LISTEN_FORMS: &str = "IP:PORT, [IPv6]:PORT or localhost:PORT, such as 127.0.0.1:8765";

impl HttpConfig {
    /// Checks an address against the loopback rule.
    pub fn checked(listen: SocketAddr, allow_remote: bool) -> Result<Self, ConfigError> {
        check_loopback(listen, allow_remote)?;
        Ok(Self {
            listen: Some(listen),
            allow_remote,
            ..Self::default()
        })
    }
}

fn check_loopback(listen: SocketAddr, allow_remote: bool) -> Result<(), ConfigError> {
    if !listen.ip().is_loopback() && !allow_remote {
        return Err(ConfigError::Http(format!(
            "the HTTP API listens on loopback addresses only ({listen} is not one); \
             use 127.0.0.1:{port}, or pass --http-allow-remote (unsafe: anyone who can \
             reach the port and read the token drives your jobs, over clear text)",
            port = listen.port()
        )));
    }
    Ok(())
}

/// Parses a listen address: `IP:PORT`, `[IPv6]:PORT` or `localhost:PORT`.
pub fn parse_listen(text: &str) -> Result<SocketAddr, ConfigError> {
    listen_address(text).ok_or_else(|| {
        ConfigError::Http(format!(
            "invalid HTTP listen address {:?}: expected {LISTEN_FORMS}",
            text.trim()
        ))
    })
}

fn listen_address(text: &str) -> Option<SocketAddr> {
    let text = text.trim();
    if let Some(port) = text.strip_prefix("localhost:")
        && let Ok(port) = port.parse::<u16>()
    {
        return Some(SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), port));
    }
    text.parse().ok()
}

/// Run logs (`[logs]`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LogsConfig {
    /// The free space kept on the file system holding the logs: a run's output stops
    /// being written below it, so the ledger beside them always has room to record.
    pub keep_free: KeepFree,
}

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
    /// Where the power supplies are read, laid out as Linux's `/sys/class/power_supply`;
    /// `None`: the platform's own.
    pub power_supplies: Option<std::path::PathBuf>,
}

/// What a store URL may be, for the messages that refuse one.
const STORE_URL_FORMS: &str = "a postgres:// URL (such as postgres://stead@db.lan/stead)";

/// Checks a store URL's scheme: only PostgreSQL is shared.
pub fn checked_store_url(url: &str) -> Result<String, ConfigError> {
    store_url(url).ok_or_else(|| {
        ConfigError::Store(format!(
            "expected {STORE_URL_FORMS}, not {:?}; leave it out to keep the ledger in the \
             state directory",
            stead_protocol::redact_url(url.trim())
        ))
    })
}

fn store_url(url: &str) -> Option<String> {
    let url = url.trim();
    (url.starts_with("postgres://") || url.starts_with("postgresql://")).then(|| url.to_string())
}

impl Config {
    /// Loads `config.toml` from the state directory (absent means defaults) and applies
    /// environment overrides from the process environment.
    pub fn load(path: &Path) -> Result<Self, ConfigError> {
        Self::load_with(path, |name| std::env::var(name).ok())
    }

    /// Like [`Config::load`] with an injected environment lookup. Nothing is applied
    /// unless everything is valid: an error leaves no half-read configuration behind.
    pub fn load_with(
        path: &Path,
        env: impl Fn(&str) -> Option<String>,
    ) -> Result<Self, ConfigError> {
        let mut config = Self::default();
        match std::fs::read_to_string(path) {
            Ok(text) => file::apply(path, &text, &mut config)?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(source) => {
                return Err(ConfigError::Read {
                    path: path.to_path_buf(),
                    source,
                });
            }
        }
        for setting in SETTINGS {
            // An empty variable is unset: `STEAD_LEASE_MS= stead ...` keeps the file's.
            let Some(name) = setting.env else { continue };
            if let Some(text) = env(name).filter(|v| !v.trim().is_empty()) {
                setting
                    .read_env(&text, &mut config)
                    .map_err(|problem| ConfigError::Env {
                        name,
                        setting: setting.name(),
                        value: setting.shown(&text),
                        problem,
                    })?;
            }
        }
        config.validate()?;
        Ok(config)
    }

    /// The rules that join two settings; each setting's own range is checked as it is
    /// read.
    fn validate(&self) -> Result<(), ConfigError> {
        let t = &self.timings;
        if t.heartbeat >= t.lease {
            return Err(ConfigError::Inconsistent(format!(
                "[timings] heartbeat ({}) must be shorter than [timings] lease ({}), or the \
                 lease lapses between renewals",
                format_delay(t.heartbeat),
                format_delay(t.lease)
            )));
        }
        if let Some(listen) = self.http.listen {
            check_loopback(listen, self.http.allow_remote)?;
        }
        Ok(())
    }
}
