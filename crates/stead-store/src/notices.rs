//! Notifiers and the outbox of events: who is told of what, and what is still to be
//! delivered. Events themselves are written by the transactions whose outcomes cause
//! them (`outcomes.rs`); this is how they are declared, read and marked delivered.

use jiff::Timestamp;
use stead_core::records::{NotifierStats, OutboxRow};
use stead_protocol::NotifierSpec;

use crate::Refusal;
use crate::StoreError;
use crate::backend::NoticeSteps;
use crate::backend::sealed::Backend;
use crate::backend::{Announce, Guard, Steps};

pub trait Notices {
    /// Adds or replaces a notifier.
    fn notifier_set(
        &self,
        spec: &NotifierSpec,
        now: Timestamp,
        epoch: i64,
    ) -> Result<(), StoreError>;
    /// All notifiers, by name.
    fn notifier_list(&self) -> Result<Vec<NotifierSpec>, StoreError>;
    /// All notifiers with how their deliveries stand, by name.
    fn notifier_report(&self) -> Result<Vec<(NotifierSpec, NotifierStats)>, StoreError>;
    /// Removes a notifier and the events not yet delivered to it.
    fn notifier_remove(&self, name: &str, epoch: i64) -> Result<NotifierSpec, StoreError>;
    /// Each notifier's oldest undelivered event whose attempt is due by `now`.
    fn outbox_due(&self, now: Timestamp) -> Result<Vec<OutboxRow>, StoreError>;
    /// The earliest next attempt of a notifier's oldest undelivered event (those behind
    /// it wait for it).
    fn outbox_next(&self) -> Result<Option<Timestamp>, StoreError>;
    /// Records an attempt: delivered at `Ok(at)`, or failed with `Err((why, next))`.
    fn outbox_attempted(
        &self,
        id: i64,
        outcome: &Result<Timestamp, (String, Timestamp)>,
        epoch: i64,
    ) -> Result<(), StoreError>;
    /// Deletes events delivered before `before`; answers how many.
    fn outbox_prune(&self, before: Timestamp, epoch: i64) -> Result<u64, StoreError>;
}

impl<B: Backend> Notices for B {
    fn notifier_set(
        &self,
        spec: &NotifierSpec,
        now: Timestamp,
        epoch: i64,
    ) -> Result<(), StoreError> {
        self.write(Guard::Catalog(epoch), &mut |tx| {
            tx.notifier_upsert(spec, now)?;
            tx.announce(Announce::Changed)
        })
    }

    fn notifier_list(&self) -> Result<Vec<NotifierSpec>, StoreError> {
        self.read(&mut |tx| tx.notifier_list())
    }

    fn notifier_report(&self) -> Result<Vec<(NotifierSpec, NotifierStats)>, StoreError> {
        self.read(&mut |tx| {
            let mut all = Vec::new();
            for spec in tx.notifier_list()? {
                let stats = tx.notifier_stats(&spec.name)?;
                all.push((spec, stats));
            }
            Ok(all)
        })
    }

    fn notifier_remove(&self, name: &str, epoch: i64) -> Result<NotifierSpec, StoreError> {
        self.write(Guard::Catalog(epoch), &mut |tx| {
            let spec = tx
                .notifier_remove(name)?
                .ok_or_else(|| StoreError::Refused(Refusal::NoSuchNotifier(name.to_string())))?;
            tx.announce(Announce::Changed)?;
            Ok(spec)
        })
    }

    fn outbox_due(&self, now: Timestamp) -> Result<Vec<OutboxRow>, StoreError> {
        self.read(&mut |tx| tx.outbox_due(now))
    }

    fn outbox_next(&self) -> Result<Option<Timestamp>, StoreError> {
        self.read(&mut |tx| tx.outbox_next())
    }

    fn outbox_attempted(
        &self,
        id: i64,
        outcome: &Result<Timestamp, (String, Timestamp)>,
        epoch: i64,
    ) -> Result<(), StoreError> {
        // Delivering is the scheduler leader's work on a shared ledger.
        self.write(Guard::Leader(epoch), &mut |tx| {
            tx.outbox_attempted(id, outcome)
        })
    }

    fn outbox_prune(&self, before: Timestamp, epoch: i64) -> Result<u64, StoreError> {
        self.write(Guard::Host(epoch), &mut |tx| tx.outbox_prune(before))
    }
}
