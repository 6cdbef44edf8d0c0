//! `sleep_list`: the sleeps the machine (or, on a shared ledger, each host) woke from,
//! newest first.

use std::sync::Arc;

use stead_protocol::limits::MAX_RUN_LIST;
use stead_protocol::{Sleep, SleepFilter};

use super::{Answer, invalid};
use crate::request::ledger_calls::blocking;
use crate::shared::Shared;

pub async fn handle(shared: &Arc<Shared>, filter: SleepFilter) -> Answer<Vec<Sleep>> {
    if filter.limit.is_some_and(|l| l == 0 || l > MAX_RUN_LIST) {
        return Err(invalid(format!(
            "limit must be between 1 and {MAX_RUN_LIST}"
        )));
    }
    blocking(shared, move |s| s.world.store.sleep_list(filter.limit)).await
}
