//! `hosts`: the hosts sharing the ledger, their state and who leads the scheduler. On a
//! ledger of one host: this one, which leads.

use std::sync::Arc;

use stead_core::clock::rfc3339;
use stead_protocol::{HostInfo, HostsResult};

use super::Answer;
use crate::request::ledger_calls::blocking;
use crate::shared::Shared;

pub async fn handle(shared: &Arc<Shared>) -> Answer<HostsResult> {
    let ledger = shared.world.ledger.describe();
    let lease = stead_core::clock::span(shared.world.config.timings.lease);
    let rows = blocking(shared, |s| match s.world.store.cluster() {
        Some(cluster) => Ok(Some((cluster.leader()?, cluster.hosts()?))),
        None => Ok(None),
    })
    .await?;
    let Some((leader, hosts)) = rows else {
        // One host: this one, which leads.
        let status = shared.status();
        let machine = shared.world.machine_id.clone();
        let in_flight = blocking(shared, move |s| s.world.store.runs_active(&machine)).await?;
        return Ok(HostsResult {
            shared: false,
            ledger,
            leader: Some(shared.world.machine_id.clone()),
            hosts: vec![HostInfo {
                machine_id: shared.world.machine_id.clone(),
                name: shared.me.host_name.clone(),
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
                clock_offset_ms: None,
            }],
        });
    };
    // Judged by the database's clock, as the leader judges them.
    let leading = leader.filter(|l| l.live).and_then(|l| l.machine_id);
    let hosts = hosts
        .into_iter()
        // A row written by a connection that never served (a monitor, `stead doctor`).
        .filter(|h| h.renewed_at.is_some())
        .map(|h| {
            let state = h.state(lease);
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
                clock_offset_ms: h.clock_offset_ms,
            }
        })
        .collect();
    Ok(HostsResult {
        shared: true,
        ledger,
        leader: leading,
        hosts,
    })
}
