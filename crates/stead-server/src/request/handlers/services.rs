//! What the service, hold and gate handlers share: the protocol's view of a service,
//! validation of a declaration, lookups, and the durations they accept.

use std::sync::Arc;

use jiff::SignedDuration;
use stead_core::jobs::validate::valid_name;
use stead_core::records::{StoredJob, StoredService};
use stead_core::schedule;
use stead_protocol::{ErrorBody, ErrorCode, STEAD_SERVICE, Service, ServiceSpec};

use super::invalid;
use crate::request::ledger_calls::blocking;
use crate::shared::Shared;

/// The protocol's view of a declared service.
pub fn view(service: &StoredService, jobs: &[StoredJob]) -> Service {
    Service {
        spec: service.spec.clone(),
        builtin: false,
        restarting: service.restarting_since.is_some(),
        dependents: dependents(&service.spec.name, jobs),
    }
}

/// The jobs that name `service` in `depends_on`.
pub fn dependents(service: &str, jobs: &[StoredJob]) -> Vec<String> {
    jobs.iter()
        .filter(|j| j.spec.depends_on.iter().any(|d| d == service))
        .map(|j| j.spec.name.clone())
        .collect()
}

/// The built-in `stead` service.
pub fn builtin(jobs: &[StoredJob]) -> Service {
    Service {
        spec: ServiceSpec {
            name: STEAD_SERVICE.to_string(),
            process: Some("stead".into()),
            ..ServiceSpec::default()
        },
        builtin: true,
        restarting: false,
        dependents: dependents(STEAD_SERVICE, jobs),
    }
}

/// Checks a service spec before anything is stored.
pub fn validate(spec: &ServiceSpec) -> Result<(), ErrorBody> {
    if spec.name == STEAD_SERVICE {
        return Err(ErrorBody::new(
            ErrorCode::Conflict,
            "\"stead\" is the built-in service: it needs no declaration",
        ));
    }
    if !valid_name(&spec.name) {
        return Err(invalid(format!(
            "invalid service name {:?}: use 1 to 64 letters, digits, '-', '_' or '.', starting with a letter or digit",
            spec.name
        )));
    }
    for (field, value) in [
        ("restart", &spec.restart),
        ("ready", &spec.ready),
        ("systemd_unit", &spec.systemd_unit),
        ("launchd_label", &spec.launchd_label),
        ("process", &spec.process),
    ] {
        if value.as_deref().is_some_and(|v| v.trim().is_empty()) {
            return Err(invalid(format!("service {}: {field} is empty", spec.name)));
        }
        if value.as_deref().is_some_and(|v| v.contains('\0')) {
            return Err(invalid(format!(
                "service {}: {field} contains a NUL byte",
                spec.name
            )));
        }
    }
    if spec
        .ready
        .as_deref()
        .is_some_and(|r| r.starts_with("https://"))
    {
        return Err(invalid(format!(
            "service {}: https:// ready URLs are not supported; use an http:// URL on loopback, or a command such as `curl -fsS URL`",
            spec.name
        )));
    }
    Ok(())
}

/// Fails with `not_found` unless `name` is `stead` or a declared service.
pub async fn known(shared: &Arc<Shared>, name: &str) -> Result<(), ErrorBody> {
    if name == STEAD_SERVICE {
        return Ok(());
    }
    let services = blocking(shared, |s| s.world.store.service_list()).await?;
    if services.iter().any(|s| s.spec.name == name) {
        Ok(())
    } else {
        Err(ErrorBody::new(
            ErrorCode::NotFound,
            format!("no service named {name:?} (see `stead service ls`)"),
        ))
    }
}

/// A TTL or window: at most a year, so the time arithmetic built on it stays in range.
pub fn duration(field: &str, value: &str) -> Result<SignedDuration, ErrorBody> {
    schedule::parse_duration(value)
        .ok()
        .filter(|d| d.as_secs() <= 366 * 24 * 3600)
        .and_then(|d| SignedDuration::try_from(d).ok())
        .ok_or_else(|| {
            invalid(format!(
                "invalid {field} {value:?}: expected a duration such as 90s, 10m or 1h, at most 366d"
            ))
        })
}
