//! Results of the lifecycle methods: `status`, `stop` and `http`.

use serde::{Deserialize, Serialize};

/// What `stead status --json` prints. Times are RFC 3339 in UTC.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StatusResult {
    pub server_id: String,
    pub pid: u32,
    pub epoch: i64,
    pub version: String,
    pub protocol: String,
    pub started_at: String,
    pub lease_expires_at: String,
    pub state_dir: String,
    pub socket: String,
    /// The process start identity the lease and lock file record for this server.
    pub start_identity: String,
    /// Where the ledger lives: the SQLite file, or the shared PostgreSQL database (its
    /// URL without a password).
    pub ledger: String,
    /// The HTTP API's base URL (`http://127.0.0.1:PORT`), while it listens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub http: Option<String>,
    /// On a shared ledger: this host's clock minus the database's, in milliseconds, as
    /// measured at the last lease renewal (positive: this host is ahead).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clock_offset_ms: Option<i64>,
    /// The disk holding the state directory, when it can be read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disk: Option<crate::DiskSpace>,
    /// Jobs overdue now: no success within their `expect_within`. Absent when none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub overdue: Vec<Overdue>,
}

/// A job overdue: its expected success has not come.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Overdue {
    pub job: String,
    /// Its `expect_within`.
    pub expect_within: String,
    /// When its success was due (RFC 3339, UTC): the lapse began then.
    pub since: String,
}

/// Parameters of `stop`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StopParams {
    /// Cut the runs in flight too: they end `interrupted` ("stead was stopped with
    /// --cancel-runs") and are resumed once after the next start. Without it, runs go on
    /// under their monitors and the next server adopts them.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub cancel_runs: bool,
}

/// The answer to `stop`, sent once the server has released its lease, lock file and
/// socket, so a successor can start the moment the client reads it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StopResult {
    pub server_id: String,
    pub pid: u32,
    pub start_identity: String,
}

/// Parameters of `http`: where the HTTP API listens, started on a loopback port first
/// when `start` is set and it is off.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HttpParams {
    #[serde(default)]
    pub start: bool,
}

/// The result of `http`: what `stead dashboard --json` prints.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HttpEndpoint {
    /// `http://127.0.0.1:PORT`, or `None` while the API is off.
    pub url: Option<String>,
    /// The dashboard's address with its token in the fragment (never sent to a server).
    pub dashboard_url: Option<String>,
    /// The bearer token every API request carries.
    pub token: Option<String>,
    /// The file that keeps the token (0600).
    pub token_file: String,
}

/// What `stead hosts --json` prints: the hosts sharing the ledger and who leads.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HostsResult {
    /// Whether the ledger is shared (PostgreSQL); on SQLite there is one host, this one.
    pub shared: bool,
    /// The ledger, as `status` names it.
    pub ledger: String,
    /// The machine id of the host whose server schedules for all; `None` while nobody
    /// leads (an election is due at the next heartbeat).
    pub leader: Option<String>,
    pub hosts: Vec<HostInfo>,
}

/// One host sharing the ledger.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HostInfo {
    pub machine_id: String,
    /// What `--host` names: `STEAD_HOST_NAME`, else the system's host name.
    pub name: String,
    /// `serving` (its server renews its lease), `stopped` (released it lately), or
    /// `lost` (silent for longer than a lease: its runs in flight were cut).
    pub state: String,
    pub leader: bool,
    pub server_id: Option<String>,
    pub pid: Option<u32>,
    pub epoch: i64,
    /// Its server's last lease renewal (RFC 3339).
    pub last_heartbeat: Option<String>,
    /// Runs it has queued or running.
    pub in_flight: u64,
    /// Its clock minus the database's at its last renewal, in milliseconds (positive:
    /// ahead); null on a ledger of one host, which has only its own clock.
    #[serde(default)]
    pub clock_offset_ms: Option<i64>,
}
