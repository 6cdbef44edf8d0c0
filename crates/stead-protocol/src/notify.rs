//! Notifications on the wire: where events about runs are sent, and the events
//! themselves as a receiver gets them.

use serde::{Deserialize, Serialize};

use crate::Run;

/// What a notifier may be told of.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NotifyEvent {
    /// The last attempt of a genuine failure (no retry follows).
    Failed,
    /// A cut run's debt was dropped: it will not be resumed (too old, job gone or
    /// disabled, opted out).
    NotResumed,
    /// Fires not run because they were missed outside the catch-up window or under
    /// `catch_up = skip`.
    Missed,
    /// The first success of a job after a failure, or one that ends its overdue lapse.
    Recovered,
    /// A run was cut (it is owed, and resumed unless something says otherwise).
    Interrupted,
    /// A job with `expect_within` has had no success for that long: once per lapse.
    Overdue,
    /// A test event (`stead notify test`).
    Test,
}

impl NotifyEvent {
    /// What a notifier gets when it names no events.
    pub const DEFAULT: [NotifyEvent; 3] = [
        NotifyEvent::Failed,
        NotifyEvent::NotResumed,
        NotifyEvent::Overdue,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            NotifyEvent::Failed => "failed",
            NotifyEvent::NotResumed => "not_resumed",
            NotifyEvent::Missed => "missed",
            NotifyEvent::Recovered => "recovered",
            NotifyEvent::Interrupted => "interrupted",
            NotifyEvent::Overdue => "overdue",
            NotifyEvent::Test => "test",
        }
    }
}

/// A notifier as declared (`stead notify add`, `[[notify]]` in an apply file).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NotifierSpec {
    /// Letters, digits, `-`, `_` and `.`, at most 64 characters.
    pub name: String,
    /// Where each event is POSTed as JSON (`http://` or `https://`).
    pub url: String,
    /// The events it gets; empty: `failed`, `not_resumed` and `overdue`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub events: Vec<NotifyEvent>,
    /// Only events of these jobs; empty: every job.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub jobs: Vec<String>,
    /// Sign each delivery with HMAC-SHA256 (header `X-Stead-Signature: sha256=HEX`), with a
    /// secret the server keeps in its state directory (`notify/NAME.secret`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub sign: bool,
}

/// A notifier as the server knows it, with how its deliveries go.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Notifier {
    #[serde(flatten)]
    pub spec: NotifierSpec,
    /// The events it gets (its `events`, or the default ones).
    pub delivers: Vec<NotifyEvent>,
    /// The file holding its signing secret, when it signs.
    pub secret_file: Option<String>,
    /// Events written and not yet delivered.
    pub pending: u64,
    /// Events delivered.
    pub delivered: u64,
    /// When the last delivery was accepted (RFC 3339, UTC).
    pub last_delivered_at: Option<String>,
    /// Why the latest attempt failed, while its event is still pending.
    pub last_error: Option<String>,
}

/// Parameters naming one notifier.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NotifierName {
    pub name: String,
}

/// What `notify_test` did: one test event POSTed now, outside the outbox.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NotifyTestResult {
    pub name: String,
    pub url: String,
    /// The receiver's HTTP status, when it answered.
    pub status: Option<u16>,
    /// Whether it answered 2xx.
    pub delivered: bool,
    /// Why it was not delivered.
    pub error: Option<String>,
}

/// One event as its receiver gets it: the body of the POST.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Notification {
    /// Unique per event and stable across redeliveries: de-duplicate on it.
    pub id: String,
    pub event: NotifyEvent,
    pub job: String,
    /// When the outcome was recorded (RFC 3339, UTC).
    pub at: String,
    /// One line for a person (what Slack- or ntfy-style receivers show).
    pub text: String,
    /// The run the event is about, as `stead show --json` prints it.
    pub run: Option<Run>,
}
