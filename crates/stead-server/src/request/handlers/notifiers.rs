//! What the notifier handlers share: validation, and the protocol's view of a notifier.

use stead_core::clock::rfc3339;
use stead_core::jobs::validate::valid_name;
use stead_core::records::NotifierStats;
use stead_protocol::{
    ErrorBody, ErrorCode, Notifier, NotifierSpec, NotifyEvent, redact_notifier_url,
};

use super::invalid;
use crate::shared::Shared;
use crate::tasks::notify::{secret, secret_path};

/// A notifier spec checked, with its events in one order and without repeats.
pub fn validated(mut spec: NotifierSpec) -> Result<NotifierSpec, ErrorBody> {
    if !valid_name(&spec.name) {
        return Err(invalid(format!(
            "invalid notifier name {:?}: use 1 to 64 letters, digits, '-', '_' or '.', starting with a letter or digit",
            spec.name
        )));
    }
    let url = spec.url.trim();
    let scheme_ok = url.starts_with("http://") || url.starts_with("https://");
    if !scheme_ok || url.len() > 2048 || url.chars().any(|c| c.is_control() || c == ' ') {
        return Err(invalid(format!(
            "notifier {}: url {:?} is not an http:// or https:// URL",
            spec.name,
            redact_notifier_url(&spec.url)
        )));
    }
    spec.url = url.to_string();
    if spec.events.contains(&NotifyEvent::Test) {
        return Err(invalid(format!(
            "notifier {}: test is not an event to subscribe to (`stead notify test` sends one)",
            spec.name
        )));
    }
    spec.events.sort();
    spec.events.dedup();
    if let Some(job) = spec.jobs.iter().find(|j| !valid_name(j)) {
        return Err(invalid(format!(
            "notifier {}: {job:?} is not a job name",
            spec.name
        )));
    }
    Ok(spec)
}

/// Makes a signing notifier's secret, before the notifier exists (so its receiver can be
/// given the secret at once); nothing for one that does not sign.
pub fn signing_secret(shared: &Shared, spec: &NotifierSpec) -> Result<(), ErrorBody> {
    if !spec.sign {
        return Ok(());
    }
    secret(shared, &spec.name).map(drop).map_err(|e| {
        ErrorBody::new(
            ErrorCode::Internal,
            format!(
                "notifier {}: cannot keep its signing secret: {e}",
                spec.name
            ),
        )
    })
}

/// A notifier as answered: its URL shown masked (a webhook's URL may carry a token), kept
/// and used as given.
pub fn view(shared: &Shared, mut spec: NotifierSpec, stats: NotifierStats) -> Notifier {
    spec.url = redact_notifier_url(&spec.url);
    let delivers = if spec.events.is_empty() {
        NotifyEvent::DEFAULT.to_vec()
    } else {
        spec.events.clone()
    };
    let secret_file = spec
        .sign
        .then(|| secret_path(shared, &spec.name).display().to_string());
    Notifier {
        spec,
        delivers,
        secret_file,
        pending: stats.pending,
        delivered: stats.delivered,
        last_delivered_at: stats.last_delivered_at.map(rfc3339),
        last_error: stats.last_error,
    }
}
