//! Typed calls for services, holds, readiness and gated restarts.

use std::time::Duration;

use stead_protocol::{
    Empty, Hold, HoldName, HoldSpec, Readiness, ReadinessParams, RestartMark, Service, ServiceName,
    ServiceSpec, method,
};

use crate::{ClientError, Connection};

impl Connection {
    /// Declares a service; `conflict` when the name is taken (or is `stead`).
    pub fn service_add(&mut self, spec: &ServiceSpec) -> Result<Service, ClientError> {
        self.call::<method::ServiceAdd>(spec)
    }

    /// All services, the built-in `stead` first.
    pub fn service_list(&mut self) -> Result<Vec<Service>, ClientError> {
        self.call::<method::ServiceList>(&Empty {})
    }

    /// Removes a service; refused while jobs depend on it.
    pub fn service_remove(&mut self, name: &str) -> Result<Service, ClientError> {
        self.call::<method::ServiceRemove>(&ServiceName {
            name: name.to_string(),
        })
    }

    /// Acquires a hold on a service, or renews it when the name is already held.
    pub fn hold_acquire(&mut self, spec: &HoldSpec) -> Result<Hold, ClientError> {
        self.call::<method::HoldAcquire>(spec)
    }

    /// Releases a hold and returns it as it was.
    pub fn hold_release(&mut self, name: &str) -> Result<Hold, ClientError> {
        self.call::<method::HoldRelease>(&HoldName {
            name: name.to_string(),
        })
    }

    /// All holds, live and wedged.
    pub fn hold_list(&mut self) -> Result<Vec<Hold>, ClientError> {
        self.call::<method::HoldList>(&Empty {})
    }

    /// What a restart of `service` would cut now.
    pub fn readiness(
        &mut self,
        service: Option<&str>,
        window: Option<&str>,
    ) -> Result<Readiness, ClientError> {
        self.call::<method::Readiness>(&ReadinessParams {
            service: service.map(str::to_string),
            window: window.map(str::to_string),
            wait_ms: None,
            unless: None,
        })
    }

    /// Waits (on the server, event-driven) until readiness differs from `last`, or up to
    /// `wait`, and returns it.
    pub fn readiness_change(
        &mut self,
        last: &Readiness,
        window: Option<&str>,
        wait: Duration,
    ) -> Result<Readiness, ClientError> {
        self.call::<method::Readiness>(&ReadinessParams {
            service: Some(last.service.clone()),
            window: window.map(str::to_string),
            wait_ms: Some(wait.as_millis() as u64),
            unless: Some(last.clone()),
        })
    }

    /// Marks a gated restart of `service` under way; with `cut_runs`, its dependent runs
    /// in flight are cut (interrupted) first.
    pub fn restart_begin(&mut self, service: &str, cut_runs: bool) -> Result<(), ClientError> {
        self.call::<method::RestartBegin>(&RestartMark {
            service: service.to_string(),
            cut_runs,
        })?;
        Ok(())
    }

    /// Marks the restart of `service` over: it is ready again.
    pub fn restart_end(&mut self, service: &str) -> Result<(), ClientError> {
        self.call::<method::RestartEnd>(&RestartMark {
            service: service.to_string(),
            cut_runs: false,
        })?;
        Ok(())
    }
}
