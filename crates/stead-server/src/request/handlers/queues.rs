//! What the queue handlers share: validation, and the protocol's view of a stored queue.

use stead_core::jobs::validate::valid_name;
use stead_core::records::{QueueLoad, StoredJob, StoredQueue};
use stead_protocol::{ErrorBody, Queue, QueueSpec};

use super::invalid;

/// A queue spec checked: a valid name and a limit of at least one.
pub fn validated(spec: QueueSpec) -> Result<QueueSpec, ErrorBody> {
    if !valid_name(&spec.name) {
        return Err(invalid(format!(
            "invalid queue name {:?}: use 1 to 64 letters, digits, '-', '_' or '.', starting with a letter or digit",
            spec.name
        )));
    }
    if spec.parallel == 0 {
        return Err(invalid(format!(
            "queue {}: parallel must be at least 1",
            spec.name
        )));
    }
    Ok(spec)
}

/// A queue with the jobs that name it and its runs on this host.
pub fn view(queue: &StoredQueue, jobs: &[StoredJob], loads: &[QueueLoad]) -> Queue {
    let load = loads
        .iter()
        .find(|l| l.queue.as_deref() == Some(queue.name.as_str()));
    Queue {
        spec: QueueSpec {
            name: queue.name.clone(),
            parallel: queue.parallel,
        },
        jobs: jobs
            .iter()
            .filter(|j| j.spec.queue.as_deref() == Some(queue.name.as_str()))
            .map(|j| j.spec.name.clone())
            .collect(),
        running: load.map_or(0, |l| l.running),
        waiting: load.map_or(0, |l| l.waiting),
    }
}
