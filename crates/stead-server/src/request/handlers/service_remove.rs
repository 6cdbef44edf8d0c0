//! `service_remove`: refused for `stead` and while a job depends on the service.

use std::sync::Arc;

use stead_protocol::{ErrorBody, ErrorCode, STEAD_SERVICE, Service, ServiceName};

use super::Answer;
use super::services::view;
use crate::request::ledger_calls::blocking;
use crate::shared::Shared;

pub async fn handle(shared: &Arc<Shared>, params: ServiceName) -> Answer<Service> {
    if params.name == STEAD_SERVICE {
        return Err(ErrorBody::new(
            ErrorCode::Conflict,
            "\"stead\" is the built-in service and cannot be removed",
        ));
    }
    let epoch = shared.epoch();
    let (service, jobs) = blocking(shared, move |s| {
        let service = s.world.store.service_remove(&params.name, epoch)?;
        Ok((service, s.world.store.job_list()?))
    })
    .await?;
    shared.changed();
    Ok(view(&service, &jobs))
}
