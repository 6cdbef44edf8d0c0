//! `hold_acquire`: "I am mid-work on this service", for a time-to-live; acquiring a held
//! name renews it, keeping its first acquisition.

use std::sync::Arc;

use stead_core::jobs::validate::valid_name;
use stead_core::readiness::hold_view;
use stead_core::records::StoredHold;
use stead_protocol::{Hold, HoldSpec};

use super::services::{duration, known};
use super::{Answer, invalid};
use crate::request::ledger_calls::blocking;
use crate::shared::Shared;

pub async fn handle(shared: &Arc<Shared>, spec: HoldSpec) -> Answer<Hold> {
    if !valid_name(&spec.name) {
        return Err(invalid(format!("invalid hold name {:?}", spec.name)));
    }
    let ttl = duration("ttl", &spec.ttl)?;
    known(shared, &spec.service).await?;
    let now = shared.world.clock.now();
    let hold = StoredHold {
        name: spec.name,
        service: spec.service,
        acquired_at: now,
        expires_at: now + ttl,
    };
    let epoch = shared.epoch();
    let hold = blocking(shared, move |s| s.world.store.hold_upsert(&hold, epoch)).await?;
    shared.changed();
    Ok(hold_view(&hold, now))
}
