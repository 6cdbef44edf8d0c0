//! `service_add`: a service runs depend on, declared.

use std::sync::Arc;

use stead_protocol::{Service, ServiceSpec};

use super::Answer;
use super::services::{validate, view};
use crate::request::ledger_calls::blocking;
use crate::shared::Shared;

pub async fn handle(shared: &Arc<Shared>, spec: ServiceSpec) -> Answer<Service> {
    validate(&spec)?;
    let epoch = shared.epoch();
    let (service, jobs) = blocking(shared, move |s| {
        let service = s
            .world
            .store
            .service_insert(&spec, s.world.clock.now(), epoch)?;
        Ok((service, s.world.store.job_list()?))
    })
    .await?;
    shared.changed();
    Ok(view(&service, &jobs))
}
