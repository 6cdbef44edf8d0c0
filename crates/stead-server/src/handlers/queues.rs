//! What the queue handlers share: the protocol's view of a stored queue.

use stead_core::records::{QueueLoad, StoredJob, StoredQueue};
use stead_protocol::{Queue, QueueSpec};

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
