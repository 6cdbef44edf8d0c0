//! Jobs, services and holds: the catalog the scheduler and the gate read, and its
//! transactions, written once over the backends' [`Steps`].

use jiff::Timestamp;
use stead_core::records::{Changes, StoredHold, StoredJob, StoredService};
use stead_protocol::{JobSpec, ServiceSpec};

use crate::StoreError;
use crate::backend::sealed::Backend;
use crate::backend::{Announce, Guard, Steps};

/// Jobs, services and holds. Every write is fenced by the writing server's `epoch`.
pub trait Catalog {
    /// Adds a job; [`StoreError::JobExists`] if the name is taken.
    fn job_insert(
        &self,
        spec: &JobSpec,
        now: Timestamp,
        epoch: i64,
    ) -> Result<StoredJob, StoreError>;

    fn job_get(&self, name: &str) -> Result<Option<StoredJob>, StoreError>;

    /// All jobs, by name.
    fn job_list(&self) -> Result<Vec<StoredJob>, StoreError>;

    /// Replaces a job's spec (same name). A changed schedule restarts its fire count
    /// from `now`, so an edit never fires what the old schedule missed.
    fn job_update(
        &self,
        spec: &JobSpec,
        schedule_changed: bool,
        now: Timestamp,
        epoch: i64,
    ) -> Result<StoredJob, StoreError>;

    /// Removes a job; its runs stay in the ledger.
    fn job_remove(&self, name: &str, epoch: i64) -> Result<StoredJob, StoreError>;

    /// Applies a declarative file's changes in one transaction: all or nothing.
    fn apply(&self, changes: &Changes, now: Timestamp, epoch: i64) -> Result<(), StoreError>;

    /// Declared services, by name (the built-in `stead` is not stored).
    fn service_list(&self) -> Result<Vec<StoredService>, StoreError>;

    /// The names of the services a gated restart is under way for.
    fn services_restarting(&self) -> Result<Vec<String>, StoreError> {
        Ok(self
            .service_list()?
            .into_iter()
            .filter(|svc| svc.restarting_since.is_some())
            .map(|svc| svc.spec.name)
            .collect())
    }

    fn service_insert(
        &self,
        spec: &ServiceSpec,
        now: Timestamp,
        epoch: i64,
    ) -> Result<StoredService, StoreError>;

    /// Removes a service; refused while a job names it in `depends_on`.
    fn service_remove(&self, name: &str, epoch: i64) -> Result<StoredService, StoreError>;

    /// Marks a gated restart of the service under way (`Some(since)`) or over (`None`).
    fn service_set_restarting(
        &self,
        name: &str,
        since: Option<Timestamp>,
        epoch: i64,
    ) -> Result<(), StoreError>;

    fn hold_list(&self) -> Result<Vec<StoredHold>, StoreError>;

    /// Acquires a hold, or renews it (same name): a new expiry, the first acquisition kept.
    fn hold_upsert(&self, hold: &StoredHold, epoch: i64) -> Result<StoredHold, StoreError>;

    fn hold_remove(&self, name: &str, epoch: i64) -> Result<StoredHold, StoreError>;
}

fn insert_job(
    tx: &mut impl Steps,
    spec: &JobSpec,
    now: Timestamp,
) -> Result<StoredJob, StoreError> {
    tx.job_insert(spec, now)?
        .ok_or_else(|| StoreError::JobExists(spec.name.clone()))
}

fn update_job(
    tx: &mut impl Steps,
    spec: &JobSpec,
    schedule_changed: bool,
    now: Timestamp,
) -> Result<StoredJob, StoreError> {
    tx.job_update(spec, schedule_changed, now)?
        .ok_or_else(|| StoreError::NoSuchJob(spec.name.clone()))
}

fn remove_job(tx: &mut impl Steps, name: &str) -> Result<StoredJob, StoreError> {
    tx.job_remove(name)?
        .ok_or_else(|| StoreError::NoSuchJob(name.to_string()))
}

fn insert_service(
    tx: &mut impl Steps,
    spec: &ServiceSpec,
    now: Timestamp,
) -> Result<StoredService, StoreError> {
    tx.service_insert(spec, now)?
        .ok_or_else(|| StoreError::ServiceExists(spec.name.clone()))
}

fn update_service(tx: &mut impl Steps, spec: &ServiceSpec) -> Result<(), StoreError> {
    if tx.service_update(spec)? {
        Ok(())
    } else {
        Err(StoreError::NoSuchService(spec.name.clone()))
    }
}

/// Refused while a job names the service: that job would silently lose its protection.
fn remove_service(tx: &mut impl Steps, name: &str) -> Result<StoredService, StoreError> {
    let dependents: Vec<String> = tx
        .job_list()?
        .into_iter()
        .filter(|j| j.spec.depends_on.iter().any(|d| d == name))
        .map(|j| j.spec.name)
        .collect();
    let service = tx
        .service_remove(name)?
        .ok_or_else(|| StoreError::NoSuchService(name.to_string()))?;
    if !dependents.is_empty() {
        return Err(StoreError::ServiceInUse {
            service: name.to_string(),
            jobs: dependents,
        });
    }
    Ok(service)
}

/// A catalog write: fenced, serialized with every other, and announced to every server
/// (their schedulers and readiness waiters look again).
fn catalog_write<B: Backend, T>(
    backend: &B,
    epoch: i64,
    mut f: impl FnMut(&mut B::Tx<'_>) -> Result<T, StoreError>,
) -> Result<T, StoreError> {
    backend.write(Guard::Catalog(epoch), &mut |tx| {
        let value = f(tx)?;
        tx.announce(Announce::Changed)?;
        Ok(value)
    })
}

/// A change to services' restart marks or holds: fenced and announced, not serialized
/// with catalog changes.
fn announced_write<B: Backend, T>(
    backend: &B,
    epoch: i64,
    mut f: impl FnMut(&mut B::Tx<'_>) -> Result<T, StoreError>,
) -> Result<T, StoreError> {
    backend.write(Guard::Host(epoch), &mut |tx| {
        let value = f(tx)?;
        tx.announce(Announce::Changed)?;
        Ok(value)
    })
}

impl<B: Backend> Catalog for B {
    fn job_insert(
        &self,
        spec: &JobSpec,
        now: Timestamp,
        epoch: i64,
    ) -> Result<StoredJob, StoreError> {
        catalog_write(self, epoch, |tx| insert_job(tx, spec, now))
    }

    fn job_get(&self, name: &str) -> Result<Option<StoredJob>, StoreError> {
        self.read(&mut |tx| tx.job_get(name))
    }

    fn job_list(&self) -> Result<Vec<StoredJob>, StoreError> {
        self.read(&mut |tx| tx.job_list())
    }

    fn job_update(
        &self,
        spec: &JobSpec,
        schedule_changed: bool,
        now: Timestamp,
        epoch: i64,
    ) -> Result<StoredJob, StoreError> {
        catalog_write(self, epoch, |tx| {
            update_job(tx, spec, schedule_changed, now)
        })
    }

    fn job_remove(&self, name: &str, epoch: i64) -> Result<StoredJob, StoreError> {
        catalog_write(self, epoch, |tx| remove_job(tx, name))
    }

    /// Services first (jobs may name them), then jobs, then the removed services (once
    /// no job names them).
    fn apply(&self, changes: &Changes, now: Timestamp, epoch: i64) -> Result<(), StoreError> {
        catalog_write(self, epoch, |tx| {
            for spec in &changes.create_services {
                insert_service(tx, spec, now)?;
            }
            for spec in &changes.update_services {
                update_service(tx, spec)?;
            }
            for name in &changes.remove_jobs {
                remove_job(tx, name)?;
            }
            for (spec, schedule_changed) in &changes.update_jobs {
                update_job(tx, spec, *schedule_changed, now)?;
            }
            for spec in &changes.create_jobs {
                insert_job(tx, spec, now)?;
            }
            for name in &changes.remove_services {
                remove_service(tx, name)?;
            }
            Ok(())
        })
    }

    fn service_list(&self) -> Result<Vec<StoredService>, StoreError> {
        self.read(&mut |tx| tx.service_list())
    }

    fn service_insert(
        &self,
        spec: &ServiceSpec,
        now: Timestamp,
        epoch: i64,
    ) -> Result<StoredService, StoreError> {
        catalog_write(self, epoch, |tx| insert_service(tx, spec, now))
    }

    fn service_remove(&self, name: &str, epoch: i64) -> Result<StoredService, StoreError> {
        catalog_write(self, epoch, |tx| remove_service(tx, name))
    }

    fn service_set_restarting(
        &self,
        name: &str,
        since: Option<Timestamp>,
        epoch: i64,
    ) -> Result<(), StoreError> {
        announced_write(self, epoch, |tx| {
            if tx.service_set_restarting(name, since)? {
                Ok(())
            } else {
                Err(StoreError::NoSuchService(name.to_string()))
            }
        })
    }

    fn hold_list(&self) -> Result<Vec<StoredHold>, StoreError> {
        self.read(&mut |tx| tx.hold_list())
    }

    fn hold_upsert(&self, hold: &StoredHold, epoch: i64) -> Result<StoredHold, StoreError> {
        announced_write(self, epoch, |tx| tx.hold_upsert(hold))
    }

    fn hold_remove(&self, name: &str, epoch: i64) -> Result<StoredHold, StoreError> {
        announced_write(self, epoch, |tx| {
            tx.hold_remove(name)?
                .ok_or_else(|| StoreError::NoSuchHold(name.to_string()))
        })
    }
}
