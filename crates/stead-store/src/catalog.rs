//! Jobs, services, holds and queues: the catalog the scheduler and the gate read, and its
//! transactions, written once over the backends' [`Steps`].

use jiff::Timestamp;
use stead_core::records::{Changes, StoredHold, StoredJob, StoredQueue, StoredService};
use stead_protocol::{JobSpec, QueueSpec, ServiceSpec};

use crate::Refusal;
use crate::StoreError;
use crate::backend::sealed::Backend;
use crate::backend::{Announce, Guard, Steps};
use crate::backend::{JobSteps, NoticeSteps, QueueSteps, ServiceSteps};

/// Jobs, services and holds. Every write is fenced by the writing server's `epoch`.
pub trait Catalog {
    /// Adds a job; [`StoreError::Refused(Refusal::JobExists)`] if the name is taken.
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

    /// Pauses a job until `until`, or unpauses it (`None`).
    fn job_set_paused(
        &self,
        name: &str,
        until: Option<Timestamp>,
        now: Timestamp,
        epoch: i64,
    ) -> Result<StoredJob, StoreError>;

    /// All queues, by name.
    fn queue_list(&self) -> Result<Vec<StoredQueue>, StoreError>;
    /// Creates or changes a queue.
    fn queue_set(&self, spec: &QueueSpec, now: Timestamp, epoch: i64) -> Result<(), StoreError>;
    /// Removes a queue; refused while a job names it.
    fn queue_remove(&self, name: &str, epoch: i64) -> Result<StoredQueue, StoreError>;
}

fn insert_job(
    tx: &mut impl Steps,
    spec: &JobSpec,
    now: Timestamp,
) -> Result<StoredJob, StoreError> {
    tx.job_insert(spec, now)?
        .ok_or_else(|| StoreError::Refused(Refusal::JobExists(spec.name.clone())))
}

/// A job's `queue` must exist and its `after` must name jobs without closing a cycle;
/// checked inside the catalog write, after the change, so an apply that adds both ends
/// of a chain (or a job and what it names) is judged whole.
fn check_links(tx: &mut impl Steps, spec: &JobSpec) -> Result<(), StoreError> {
    if let Some(queue) = &spec.queue
        && !tx.queue_list()?.iter().any(|q| q.name == *queue)
    {
        return Err(StoreError::Refused(Refusal::UnknownQueue {
            job: spec.name.clone(),
            queue: queue.clone(),
        }));
    }
    if spec.after.is_empty() {
        return Ok(());
    }
    let jobs = tx.job_list()?;
    let after_of = |name: &str| -> Vec<String> {
        jobs.iter()
            .find(|j| j.spec.name == name)
            .map(|j| j.spec.after.clone())
            .unwrap_or_default()
    };
    if let Some(missing) = spec
        .after
        .iter()
        .find(|a| !jobs.iter().any(|j| j.spec.name == **a))
    {
        return Err(StoreError::Refused(Refusal::NoSuchUpstream {
            job: spec.name.clone(),
            after: missing.clone(),
        }));
    }
    // A path from one of its upstream jobs back to it is a cycle.
    let mut stack: Vec<Vec<String>> = spec
        .after
        .iter()
        .map(|a| vec![spec.name.clone(), a.clone()])
        .collect();
    let mut seen = std::collections::BTreeSet::new();
    while let Some(path) = stack.pop() {
        let last = path.last().expect("a path is never empty").clone();
        if last == spec.name {
            let mut cycle = path;
            cycle.reverse();
            return Err(StoreError::Refused(Refusal::AfterCycle {
                job: spec.name.clone(),
                cycle,
            }));
        }
        if !seen.insert(last.clone()) {
            continue;
        }
        for up in after_of(&last) {
            let mut next = path.clone();
            next.push(up);
            stack.push(next);
        }
    }
    Ok(())
}

fn update_job(
    tx: &mut impl Steps,
    spec: &JobSpec,
    schedule_changed: bool,
    now: Timestamp,
) -> Result<StoredJob, StoreError> {
    tx.job_update(spec, schedule_changed, now)?
        .ok_or_else(|| StoreError::Refused(Refusal::NoSuchJob(spec.name.clone())))
}

fn remove_job(tx: &mut impl Steps, name: &str) -> Result<StoredJob, StoreError> {
    tx.job_remove(name)?
        .ok_or_else(|| StoreError::Refused(Refusal::NoSuchJob(name.to_string())))
}

/// A removed job must not be left named in another's `after`: that chain would silently
/// stop. Checked once the whole change is made.
fn check_removed(tx: &mut impl Steps, name: &str) -> Result<(), StoreError> {
    let downstream: Vec<String> = tx
        .job_list()?
        .into_iter()
        .filter(|j| j.spec.after.iter().any(|a| a == name))
        .map(|j| j.spec.name)
        .collect();
    if !downstream.is_empty() {
        return Err(StoreError::Refused(Refusal::JobInChain {
            job: name.to_string(),
            jobs: downstream,
        }));
    }
    Ok(())
}

fn insert_service(
    tx: &mut impl Steps,
    spec: &ServiceSpec,
    now: Timestamp,
) -> Result<StoredService, StoreError> {
    tx.service_insert(spec, now)?
        .ok_or_else(|| StoreError::Refused(Refusal::ServiceExists(spec.name.clone())))
}

fn update_service(tx: &mut impl Steps, spec: &ServiceSpec) -> Result<(), StoreError> {
    if tx.service_update(spec)? {
        Ok(())
    } else {
        Err(StoreError::Refused(Refusal::NoSuchService(
            spec.name.clone(),
        )))
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
        .ok_or_else(|| StoreError::Refused(Refusal::NoSuchService(name.to_string())))?;
    if !dependents.is_empty() {
        return Err(StoreError::Refused(Refusal::ServiceInUse {
            service: name.to_string(),
            jobs: dependents,
        }));
    }
    Ok(service)
}

/// Refused while a job names the queue: its runs would silently lose their limit.
fn remove_queue(tx: &mut impl Steps, name: &str) -> Result<StoredQueue, StoreError> {
    let jobs: Vec<String> = tx
        .job_list()?
        .into_iter()
        .filter(|j| j.spec.queue.as_deref() == Some(name))
        .map(|j| j.spec.name)
        .collect();
    if !jobs.is_empty() {
        return Err(StoreError::Refused(Refusal::QueueInUse {
            queue: name.to_string(),
            jobs,
        }));
    }
    tx.queue_remove(name)?
        .ok_or_else(|| StoreError::Refused(Refusal::NoSuchQueue(name.to_string())))
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
        catalog_write(self, epoch, |tx| {
            let job = insert_job(tx, spec, now)?;
            check_links(tx, spec)?;
            Ok(job)
        })
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
            let job = update_job(tx, spec, schedule_changed, now)?;
            check_links(tx, spec)?;
            Ok(job)
        })
    }

    fn job_remove(&self, name: &str, epoch: i64) -> Result<StoredJob, StoreError> {
        catalog_write(self, epoch, |tx| {
            let job = remove_job(tx, name)?;
            check_removed(tx, name)?;
            Ok(job)
        })
    }

    /// Services first (jobs may name them), then jobs, then the removed services (once
    /// no job names them).
    fn apply(&self, changes: &Changes, now: Timestamp, epoch: i64) -> Result<(), StoreError> {
        catalog_write(self, epoch, |tx| {
            // Queues first: the jobs' links to them are checked below.
            for spec in &changes.set_queues {
                tx.queue_upsert(spec, now)?;
            }
            for spec in &changes.set_notifiers {
                tx.notifier_upsert(spec, now)?;
            }
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
            for spec in changes
                .update_jobs
                .iter()
                .map(|(s, _)| s)
                .chain(&changes.create_jobs)
            {
                check_links(tx, spec)?;
            }
            for name in &changes.remove_jobs {
                check_removed(tx, name)?;
            }
            for name in &changes.remove_services {
                remove_service(tx, name)?;
            }
            for name in &changes.remove_queues {
                remove_queue(tx, name)?;
            }
            for name in &changes.remove_notifiers {
                tx.notifier_remove(name)?
                    .ok_or_else(|| StoreError::Refused(Refusal::NoSuchNotifier(name.clone())))?;
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
                Err(StoreError::Refused(Refusal::NoSuchService(
                    name.to_string(),
                )))
            }
        })
    }

    fn job_set_paused(
        &self,
        name: &str,
        until: Option<Timestamp>,
        now: Timestamp,
        epoch: i64,
    ) -> Result<StoredJob, StoreError> {
        catalog_write(self, epoch, |tx| {
            tx.job_set_paused(name, until, now)?
                .ok_or_else(|| StoreError::Refused(Refusal::NoSuchJob(name.to_string())))
        })
    }

    fn queue_list(&self) -> Result<Vec<StoredQueue>, StoreError> {
        self.read(&mut |tx| tx.queue_list())
    }

    fn queue_set(&self, spec: &QueueSpec, now: Timestamp, epoch: i64) -> Result<(), StoreError> {
        catalog_write(self, epoch, |tx| tx.queue_upsert(spec, now))
    }

    fn queue_remove(&self, name: &str, epoch: i64) -> Result<StoredQueue, StoreError> {
        catalog_write(self, epoch, |tx| remove_queue(tx, name))
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
                .ok_or_else(|| StoreError::Refused(Refusal::NoSuchHold(name.to_string())))
        })
    }
}
