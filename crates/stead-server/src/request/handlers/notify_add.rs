//! `notify_add`: add a notifier, or replace the one of that name. A signing notifier's
//! secret is made in the state directory now, so the receiver can be given it at once.

use std::sync::Arc;

use stead_protocol::{Notifier, NotifierSpec};

use super::Answer;
use super::notifiers::{signing_secret, validated, view};
use crate::request::ledger_calls::blocking;
use crate::shared::Shared;

pub async fn handle(shared: &Arc<Shared>, spec: NotifierSpec) -> Answer<Notifier> {
    let spec = validated(spec)?;
    signing_secret(shared, &spec)?;
    let (epoch, now) = (shared.epoch(), shared.world.clock.now());
    let name = spec.name.clone();
    let all = blocking(shared, move |s| {
        s.world.store.notifier_set(&spec, now, epoch)?;
        s.world.store.notifier_report()
    })
    .await?;
    shared.wake.notifiers_changed.notify_one();
    // The event stream says so (the dashboard lists queues and notifiers).
    shared.changed();
    let (spec, stats) = all
        .into_iter()
        .find(|(n, _)| n.name == name)
        .expect("the notifier was just set");
    Ok(view(shared, spec, stats))
}
