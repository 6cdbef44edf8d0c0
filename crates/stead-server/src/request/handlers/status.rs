//! `status`: the server's identity, lease and paths. A lease that reads as expired (the
//! server just woke from a sleep, before its heartbeat) is re-armed first, so status
//! never reports a lease that only looks lost.

use std::sync::Arc;
use std::time::Duration;

use stead_protocol::StatusResult;

use super::Answer;
use crate::shared::Shared;

/// How long `status` waits for a lease renewal it asked for.
const RENEW_WAIT: Duration = Duration::from_secs(1);

pub async fn handle(shared: &Arc<Shared>) -> Answer<StatusResult> {
    if shared.lease().expires_at <= shared.world.clock.now() {
        let mut updates = shared.lease_updates();
        let before = updates.borrow_and_update().expires_at;
        shared.wake.renew_now.notify_one();
        let _ =
            tokio::time::timeout(RENEW_WAIT, updates.wait_for(|l| l.expires_at != before)).await;
    }
    Ok(shared.status())
}
