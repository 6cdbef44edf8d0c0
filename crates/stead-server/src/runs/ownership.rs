//! Whether this host's runs are still its own, for the monitors of a shared ledger: each
//! monitor asks its server (`monitor_check`), and the server answers from what one query
//! per heartbeat confirmed with the database for all of them, instead of each monitor
//! asking the database itself.
//!
//! An answer says whether the ledger says the run ended (a leader that judged this host
//! lost ended it: the command must stop) and how long ago the database last answered.
//! A monitor whose job may resume on any host stops its command once that age passes a
//! lease: by then the others may judge the host lost and resume the run elsewhere.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tracing::warn;

use crate::request::ledger_calls::on_cluster;
use crate::shared::Shared;

/// A run no monitor asked about for this long is no longer looked up.
const FORGET_AFTER: Duration = Duration::from_secs(60);

#[derive(Debug, Default)]
pub struct Ownership {
    book: Mutex<Book>,
}

#[derive(Debug, Default)]
struct Book {
    /// The runs monitors asked about, and when they last did.
    asked: HashMap<i64, Instant>,
    /// Those of them the database last said had ended.
    ended: HashSet<i64>,
    /// When the last query that the database answered was sent.
    confirmed_at: Option<Instant>,
}

/// What the server tells a monitor about its run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Verdict {
    pub ended: bool,
    pub confirmed_ago: Option<Duration>,
}

impl Ownership {
    fn book(&self) -> std::sync::MutexGuard<'_, Book> {
        self.book.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The answer for `run_id` as of the last confirmation; from now on the run is
    /// looked up at every heartbeat.
    pub fn verdict(&self, run_id: i64) -> Verdict {
        let mut book = self.book();
        book.asked.insert(run_id, Instant::now());
        Verdict {
            ended: book.ended.contains(&run_id),
            confirmed_ago: book.confirmed_at.map(|at| at.elapsed()),
        }
    }

    /// The runs to look up, forgetting those nobody asked about lately.
    fn asked(&self) -> Vec<i64> {
        let mut book = self.book();
        book.asked.retain(|_, at| at.elapsed() < FORGET_AFTER);
        book.asked.keys().copied().collect()
    }

    /// What a query sent at `sent` found.
    fn confirmed(&self, sent: Instant, ended: Vec<i64>) {
        let mut book = self.book();
        book.ended = ended.into_iter().collect();
        if book.confirmed_at.is_none_or(|at| at < sent) {
            book.confirmed_at = Some(sent);
        }
    }
}

/// Confirms the asked runs with the database: called by the heartbeat right after each
/// renewal of the host's lease, so a confirmation is never older than the renewal the
/// others judge the host by (which bounds how long a cut-off copy may overlap its
/// resume; see docs/cluster.md).
pub async fn refresh(shared: &Arc<Shared>) {
    let ids = shared.ownership.asked();
    let sent = Instant::now();
    match on_cluster(shared, move |_, c| c.runs_ended(&ids)).await {
        Ok(ended) => shared.ownership.confirmed(sent, ended),
        Err(e) => warn!(cause = %e.message, "failed to confirm this host's runs with the ledger"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_verdict_is_the_last_confirmation_and_asking_registers_the_run() {
        let book = Ownership::default();
        assert_eq!(
            book.verdict(7),
            Verdict {
                ended: false,
                confirmed_ago: None
            }
        );
        assert_eq!(book.asked(), vec![7]);
        let sent = Instant::now();
        book.confirmed(sent, vec![7]);
        let v = book.verdict(7);
        assert!(v.ended);
        assert!(v.confirmed_ago.unwrap() < Duration::from_secs(5));
        // An older answer arriving late never moves the confirmation back.
        book.confirmed(sent - Duration::from_secs(30), vec![]);
        assert!(book.verdict(7).confirmed_ago.unwrap() < Duration::from_secs(5));
        assert!(!book.verdict(7).ended);
    }
}
