//! Every setting, once: its table and key in `config.toml`, its environment variable,
//! what it holds and what it is for. Reading the file and the environment and the table
//! in `docs/configuration.md` all come from [`SETTINGS`]; a new setting is a new row
//! (and the field it sets).

use std::time::Duration;

use super::FIRE_LEAD_MAX;
use super::value::{Kind, Span};

/// One setting. Its default is its field's in [`Config::default`](super::Config).
pub struct Setting {
    /// The table of `config.toml` that holds it: `timings` for `[timings]`.
    pub table: &'static str,
    /// Its key in that table, in the documented spelling.
    pub key: &'static str,
    /// The environment variable that overrides the file, if any.
    pub env: Option<&'static str>,
    /// What it is for, in one line.
    pub doc: &'static str,
    pub(super) kind: Kind,
}

impl Setting {
    /// How messages and docs name it: `[timings] lease`.
    pub fn name(&self) -> String {
        format!("[{}] {}", self.table, self.key)
    }
}

/// A duration's bounds: greater than zero, unbounded above.
const POSITIVE: (bool, Option<Duration>) = (false, None);
/// A duration that may be zero.
const MAY_BE_ZERO: (bool, Option<Duration>) = (true, None);

const fn duration(
    field: fn(&mut super::Config) -> &mut Duration,
    old: &'static str,
    (zero, most): (bool, Option<Duration>),
) -> Kind {
    Kind::Duration(Span {
        field,
        old,
        zero,
        most,
    })
}

/// Every setting, in the order the docs list them.
pub static SETTINGS: &[Setting] = &[
    Setting {
        table: "timings",
        key: "lease",
        env: Some("STEAD_LEASE_MS"),
        doc: "How long a server's lease stays valid after its last renewal.",
        kind: duration(|c| &mut c.timings.lease, "lease_ms", POSITIVE),
    },
    Setting {
        table: "timings",
        key: "heartbeat",
        env: Some("STEAD_HEARTBEAT_MS"),
        doc: "How often the server renews its lease; shorter than the lease.",
        kind: duration(|c| &mut c.timings.heartbeat, "heartbeat_ms", POSITIVE),
    },
    Setting {
        table: "timings",
        key: "probe_timeout",
        env: Some("STEAD_PROBE_TIMEOUT_MS"),
        doc: "How long a hello may take before the lock's holder counts as not serving.",
        kind: duration(
            |c| &mut c.timings.probe_timeout,
            "probe_timeout_ms",
            POSITIVE,
        ),
    },
    Setting {
        table: "timings",
        key: "start_timeout",
        env: Some("STEAD_START_TIMEOUT_MS"),
        doc: "How long a client waits for a server to become ready, across all its starts.",
        kind: duration(
            |c| &mut c.timings.start_timeout,
            "start_timeout_ms",
            POSITIVE,
        ),
    },
    Setting {
        table: "timings",
        key: "resume_delay",
        env: Some("STEAD_RESUME_DELAY_MS"),
        doc: "How long a server serves before it resumes cut runs (0: at once).",
        kind: duration(
            |c| &mut c.timings.resume_delay,
            "resume_delay_ms",
            MAY_BE_ZERO,
        ),
    },
    Setting {
        table: "timings",
        key: "resume_max_age",
        env: Some("STEAD_RESUME_MAX_AGE_MS"),
        doc: "A cut run older than this is history, not debt: it is not resumed (0: none is).",
        kind: duration(
            |c| &mut c.timings.resume_max_age,
            "resume_max_age_ms",
            MAY_BE_ZERO,
        ),
    },
    Setting {
        table: "timings",
        key: "fire_lead",
        env: Some("STEAD_FIRE_LEAD_MS"),
        doc: "How far ahead of its instant a scheduled fire is admitted, so its command \
              starts on the instant; each further fire due then adds 2ms (0: on the instant).",
        kind: duration(
            |c| &mut c.timings.fire_lead,
            "fire_lead_ms",
            (true, Some(FIRE_LEAD_MAX)),
        ),
    },
    Setting {
        table: "timings",
        key: "wake_spread",
        env: Some("STEAD_WAKE_SPREAD_MS"),
        doc: "The catch-ups that come due at one wake start spread over this long, each \
              at a delay of its own (0: all at once).",
        kind: duration(
            |c| &mut c.timings.wake_spread,
            "wake_spread_ms",
            MAY_BE_ZERO,
        ),
    },
    Setting {
        table: "timings",
        key: "spawner_idle",
        env: Some("STEAD_SPAWNER_IDLE_MS"),
        doc: "How long the process that starts run monitors is kept with no run to \
              start; then it exits until the next run (or 2s before a scheduled fire).",
        kind: duration(|c| &mut c.timings.spawner_idle, "spawner_idle_ms", POSITIVE),
    },
    Setting {
        table: "http",
        key: "listen",
        env: None,
        doc: "Where every server of the directory serves the HTTP API and the dashboard \
              (port 0: a free one at each start); unset, they are off.",
        kind: Kind::Address(|c| &mut c.http.listen),
    },
    Setting {
        table: "http",
        key: "allow_remote",
        env: None,
        doc: "Lets `listen` be a non-loopback address. Unsafe: the token, sent in clear \
              text, is then all that guards your jobs.",
        kind: Kind::Flag(|c| &mut c.http.allow_remote),
    },
    Setting {
        table: "http",
        key: "idle_timeout",
        env: Some("STEAD_HTTP_IDLE_TIMEOUT_MS"),
        doc: "A connection slower than this to send its headers, or idle this long, is closed.",
        kind: duration(|c| &mut c.http.idle_timeout, "idle_timeout_ms", POSITIVE),
    },
    Setting {
        table: "store",
        key: "url",
        env: Some("STEAD_STORE_URL"),
        doc: "A PostgreSQL ledger shared by several hosts; unset, the state directory's own \
              SQLite file.",
        kind: Kind::Url(|c| &mut c.store_url),
    },
    Setting {
        table: "logs",
        key: "keep_free",
        env: Some("STEAD_LOGS_KEEP_FREE"),
        doc: "Free space kept on the disk holding the run logs: a run's output is not \
              written below it, so the ledger has room to record.",
        kind: Kind::Reserve(|c| &mut c.logs.keep_free),
    },
    Setting {
        table: "retention",
        key: "runs_max_age",
        env: Some("STEAD_RETENTION_RUNS_MAX_AGE_MS"),
        doc: "Runs (row and log) older than this are pruned, unless their job sets \
              `keep_for` or `keep_runs`.",
        kind: duration(
            |c| &mut c.retention.runs_max_age,
            "runs_max_age_ms",
            POSITIVE,
        ),
    },
    Setting {
        table: "retention",
        key: "logs_max_age",
        env: Some("STEAD_RETENTION_LOGS_MAX_AGE_MS"),
        doc: "Run logs older than this are deleted; the run's row stays.",
        kind: duration(
            |c| &mut c.retention.logs_max_age,
            "logs_max_age_ms",
            POSITIVE,
        ),
    },
    Setting {
        table: "retention",
        key: "logs_max_total",
        env: Some("STEAD_RETENTION_LOGS_MAX_TOTAL_BYTES"),
        doc: "At most this much run log is kept on this host; the oldest go first.",
        kind: Kind::Size {
            field: |c| &mut c.retention.logs_max_total,
            old: "logs_max_total_bytes",
        },
    },
    Setting {
        table: "retention",
        key: "interval",
        env: Some("STEAD_RETENTION_INTERVAL_MS"),
        doc: "How often the server prunes (and once when it starts).",
        kind: duration(|c| &mut c.retention.interval, "interval_ms", POSITIVE),
    },
    Setting {
        table: "queues",
        key: "default_parallel",
        env: Some("STEAD_QUEUES_DEFAULT_PARALLEL"),
        doc: "At most this many runs at once of the jobs that name no queue; unset, no limit.",
        kind: Kind::Limit(|c| &mut c.queues.default_parallel),
    },
    Setting {
        table: "power",
        key: "supplies",
        env: Some("STEAD_POWER_SUPPLIES"),
        doc: "A directory laid out as Linux's /sys/class/power_supply, read for mains or \
              battery instead of the platform's own (/sys/class/power_supply, or pmset on \
              macOS).",
        kind: Kind::Path(|c| &mut c.power_supplies),
    },
];
