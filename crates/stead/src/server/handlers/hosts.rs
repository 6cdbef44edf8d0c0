//! `hosts`: the hosts sharing the ledger, their state and who leads the scheduler.

use std::sync::Arc;

use stead_protocol::{HostInfo, HostsResult};

use super::{HandlerResult, to_value};
use crate::clock::rfc3339;
use crate::server::runs::blocking;
use crate::server::shared::Shared;

pub async fn list(shared: &Arc<Shared>) -> HandlerResult {
    let ledger = shared.world.ledger.describe();
    let lease = shared.world.config.timings.lease_span();
    if !shared.world.store.is_shared() {
        // One host: this one, which leads.
        let status = shared.status();
        let machine = shared.world.machine_id.clone();
        let in_flight = blocking(shared, move |s| s.world.store.runs_active(&machine)).await?;
        return to_value(HostsResult {
            shared: false,
            ledger,
            leader: Some(shared.world.machine_id.clone()),
            hosts: vec![HostInfo {
                machine_id: shared.world.machine_id.clone(),
                name: shared.host_name.clone(),
                state: "serving".into(),
                leader: true,
                server_id: Some(status.server_id),
                pid: Some(status.pid),
                epoch: status.epoch,
                // A renewal sets the expiry one lease ahead.
                last_heartbeat: shared
                    .lease()
                    .expires_at
                    .checked_sub(lease)
                    .ok()
                    .map(rfc3339),
                in_flight: in_flight.len() as u64,
            }],
        });
    }
    let (leader, hosts) = blocking(shared, |s| {
        Ok((s.world.store.leader()?, s.world.store.hosts()?))
    })
    .await?;
    let now = shared.world.clock.now();
    let leading = leader
        .filter(|l| l.expires_at > now)
        .and_then(|l| l.machine_id);
    let hosts = hosts
        .into_iter()
        // A row written by a connection that never served (a monitor, `stead doctor`).
        .filter(|h| h.renewed_at.is_some())
        .map(|h| {
            let silent = h.renewed_at.is_none_or(|at| now.duration_since(at) > lease);
            let state = if silent {
                "lost"
            } else if h.server_id.is_some() {
                "serving"
            } else {
                "stopped"
            };
            HostInfo {
                leader: leading.as_deref() == Some(h.machine_id.as_str()),
                machine_id: h.machine_id,
                name: h.name,
                state: state.into(),
                server_id: h.server_id,
                pid: h.pid,
                epoch: h.epoch,
                last_heartbeat: h.renewed_at.map(rfc3339),
                in_flight: h.in_flight,
            }
        })
        .collect();
    to_value(HostsResult {
        shared: true,
        ledger,
        leader: leading,
        hosts,
    })
}
