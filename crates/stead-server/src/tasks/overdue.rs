//! Overdue jobs: at every heartbeat, the scheduler's leader begins the lapse of each job
//! that has gone its `expect_within` without a success (the ledger writes it once, with
//! its `overdue` event), and every server reads which jobs are overdue for `status`.

use std::sync::{Arc, Mutex};

use stead_core::clock::rfc3339;
use stead_protocol::Overdue;
use tracing::{info, warn};

use crate::request::ledger_calls::blocking;
use crate::shared::Shared;

/// The jobs overdue as last read.
#[derive(Debug, Default)]
pub struct OverdueBook(Mutex<Vec<Overdue>>);

impl OverdueBook {
    pub fn list(&self) -> Vec<Overdue> {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }
}

/// Begins the lapses due (when this server leads) and reads the jobs overdue.
pub async fn check(shared: &Arc<Shared>) {
    let leader = *shared.leader.borrow();
    let now = shared.world.clock.now();
    let checked = blocking(shared, move |s| {
        let began = match leader {
            Some(epoch) => s.world.store.overdue_check(now, epoch)?,
            None => Vec::new(),
        };
        Ok((began, s.world.store.overdue_list()?))
    })
    .await;
    match checked {
        Ok((began, list)) => {
            if !began.is_empty() {
                // Their events wait in the outbox: the deliverer hears of them here.
                shared.wake.notifiers_changed.notify_one();
            }
            for (job, since) in began {
                info!(job = %job, since = %rfc3339(since), "job is overdue");
            }
            *shared.overdue.0.lock().unwrap_or_else(|p| p.into_inner()) = list;
        }
        Err(e) => warn!(cause = %e.message, "failed to check for overdue jobs"),
    }
}
