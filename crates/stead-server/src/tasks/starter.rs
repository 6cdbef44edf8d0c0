//! Handing waiting runs to their monitors: a retry once its delay has passed, and any
//! run of a queue once the queue has room on this host, oldest first.
//!
//! A waiting run is already on the ledger, `queued`, with its plan (a run chained
//! `after` another gets its plan here, from its job as it is when it starts). Handing it
//! over is a compare-and-set on the row (`waiting = 1 → 0`), so a run is started once
//! whoever looks; a server that stops leaves waiting runs waiting, and the next one
//! picks them up. Runs wait for a place in order: a queue's later runs never overtake
//! its earliest one.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use jiff::Timestamp;
use stead_core::records::{NewRun, WaitingRun};
use stead_core::runs::{MonitorPlan, RunEnd};
use stead_protocol::{Concurrency, RunStatus, Trigger};
use tracing::{error, info};

use crate::request::ledger_calls::blocking;
use crate::runs;
use crate::shared::Shared;

/// Whether the starter has cause to read the ledger. Most changes of a run are no cause
/// when no run waited at the last read: a running mark, an admission that does not
/// wait, an end whose commit found no run waiting. Reading anyway would cost a trip to
/// the ledger's thread for every change of every run.
#[derive(Debug)]
pub struct Due {
    /// A change since the last read may have written a run waiting.
    changed: AtomicBool,
    /// Runs waited at the last read: any change is cause (an end makes room for them).
    waiting: AtomicBool,
}

impl Default for Due {
    fn default() -> Self {
        Self {
            changed: AtomicBool::new(true),
            waiting: AtomicBool::new(true),
        }
    }
}

impl Due {
    /// A change that may have written a run waiting.
    pub fn changed(&self) {
        self.changed.store(true, Ordering::SeqCst);
    }

    /// Whether to read the ledger now (taking the cause): on a shared ledger, always
    /// (another host may have written a run for this one).
    fn take(&self, shared: bool) -> bool {
        let changed = self.changed.swap(false, Ordering::SeqCst);
        changed || shared || self.waiting.load(Ordering::SeqCst)
    }

    /// What the last read found.
    fn found(&self, waiting: bool) {
        self.waiting.store(waiting, Ordering::SeqCst);
    }

    /// After a commit that ended runs through this server (any of which may have written
    /// a retry, or a run chained after it): a cause, if a run waits on this host now.
    /// When runs waited at the last read, the starter reads again anyway, but that read
    /// may have been taken before this commit: a cause all the same, without a look.
    pub fn after_ends(&self, shared: &Shared) {
        let waiting = self.waiting.load(Ordering::SeqCst)
            || shared.world.store.is_shared()
            || shared
                .world
                .store
                .runs_waiting(&shared.world.machine_id)
                .map_or(true, |runs| !runs.is_empty());
        if waiting {
            self.changed();
        }
    }
}

/// Passes whenever a run changes in a way that may start a waiting one (see [`Due`]),
/// when a run is written waiting and when the earliest retry's time comes, until the
/// server stops.
pub async fn run(shared: Arc<Shared>) {
    let mut passed = false;
    loop {
        let mut events = shared.run_events.subscribe();
        let next = if shared.runs.starter.take(shared.world.store.is_shared()) {
            pass(&shared).await
        } else {
            None
        };
        shared.passed(&mut passed);
        let clock = shared.world.clock.clone();
        tokio::select! {
            () = shared.stop.cancelled() => return,
            _ = events.recv() => {}
            () = shared.wake.waiting_changed.notified() => shared.runs.starter.changed(),
            () = async {
                match next {
                    Some(at) => clock.sleep_until(at).await,
                    None => std::future::pending().await,
                }
            } => {}
        }
    }
}

/// Starts what may start now; answers when the next waiting retry's time comes.
async fn pass(shared: &Arc<Shared>) -> Option<Timestamp> {
    let machine = shared.world.machine_id.clone();
    let found = blocking(shared, move |s| {
        let waiting = s.world.store.runs_waiting(&machine)?;
        if waiting.is_empty() {
            return Ok(None);
        }
        let loads = s.world.store.queue_loads(&machine)?;
        let limits: BTreeMap<String, u32> = s
            .world
            .store
            .queue_list()?
            .into_iter()
            .map(|q| (q.name, q.parallel))
            .collect();
        Ok(Some((waiting, loads, limits)))
    })
    .await;
    let (waiting, loads, limits) = match found {
        Ok(Some(found)) => found,
        Ok(None) => {
            shared.runs.starter.found(false);
            return None;
        }
        Err(e) => {
            error!(cause = %e.message, "failed to read the waiting runs");
            // Looked at again on the next run event.
            shared.runs.starter.changed();
            return None;
        }
    };
    shared.runs.starter.found(true);
    let now = shared.world.clock.now();
    let mut running: BTreeMap<Option<String>, u64> =
        loads.into_iter().map(|l| (l.queue, l.running)).collect();
    let mut full: BTreeSet<Option<String>> = BTreeSet::new();
    let mut next: Option<Timestamp> = None;
    for run in waiting {
        if let Some(at) = run.not_before.filter(|at| *at > now) {
            next = Some(next.map_or(at, |n| n.min(at)));
            continue;
        }
        let limit = match &run.queue {
            // A queue removed since the run was written holds nothing back.
            Some(q) => limits.get(q).copied(),
            None => shared.world.config.queues.default_parallel,
        };
        let count = running.entry(run.queue.clone()).or_default();
        if full.contains(&run.queue) || limit.is_some_and(|l| *count >= u64::from(l)) {
            full.insert(run.queue.clone());
            continue;
        }
        if start(shared, run).await {
            *count += 1;
        }
    }
    next
}

/// Hands one waiting run to a monitor; false when it did not start.
#[tracing::instrument(name = "run", skip_all, fields(run = run.id))]
async fn start(shared: &Arc<Shared>, run: WaitingRun) -> bool {
    let id = run.id;
    let (plan, made_now, replaces) = match run.plan {
        Some(plan) => (plan, false, false),
        None => match plan_now(shared, id).await {
            Some(Planned::Here { plan, replaces }) => (plan, true, replaces),
            Some(Planned::Elsewhere(plan)) => return hand_over(shared, id, plan).await,
            None => return false,
        },
    };
    let (boot, epoch) = (shared.me.boot_id.clone(), shared.epoch());
    let stored = made_now.then(|| plan.clone());
    let released = blocking(shared, move |s| {
        s.world.store.run_release(id, &boot, stored.as_ref(), epoch)
    })
    .await;
    match released {
        Ok(true) => {
            info!(job = %run.job, "a waiting run starts");
            runs::launch(shared, &plan).await;
            if replaces {
                // The runs it replaces were asked to stop when it was written.
                runs::relay_cancels(shared, None).await;
            }
            true
        }
        // Cancelled meanwhile, or started by a pass before this one.
        Ok(false) => false,
        Err(e) => {
            error!(cause = %e.message, "failed to start a waiting run");
            false
        }
    }
}

/// A chained run's plan, made when it starts.
enum Planned {
    /// It starts on this host; `replaces`: the runs it replaces were asked to stop.
    Here { plan: MonitorPlan, replaces: bool },
    /// Its job may not run on this host (its `hosts` of a shared ledger): another claims it.
    Elsewhere(MonitorPlan),
}

/// Queues a chained run for the hosts its job may run on (it counts against no queue
/// here). False: it does not start on this host.
async fn hand_over(shared: &Arc<Shared>, id: i64, plan: MonitorPlan) -> bool {
    let epoch = shared.epoch();
    match blocking(shared, move |s| {
        s.world.store.run_release_to_any_host(id, &plan, epoch)
    })
    .await
    {
        Ok(true) => info!("a chained run is queued for the hosts its job runs on"),
        Ok(false) => {}
        Err(e) => {
            error!(cause = %e.message, "failed to queue a chained run for other hosts")
        }
    }
    false
}

/// The plan of a run written without one (chained `after` another job's run), from its
/// job as it is now; a run whose job is gone is cancelled, saying so.
async fn plan_now(shared: &Arc<Shared>, id: i64) -> Option<Planned> {
    let found = blocking(shared, move |s| {
        let Some(run) = s.world.store.run_get(id)? else {
            return Ok(None);
        };
        let job = s.world.store.job_get(&run.job)?;
        Ok(Some((run, job)))
    })
    .await;
    let (run, job) = match found {
        Ok(Some(found)) => found,
        Ok(None) => return None,
        Err(e) => {
            error!(cause = %e.message, "failed to read a waiting run");
            return None;
        }
    };
    let Some(job) = job else {
        let end = RunEnd::with_reason(
            RunStatus::Cancelled,
            format!(
                "cancelled before it started: its job {} was removed",
                run.job
            ),
            shared.world.clock.now(),
        );
        let epoch = shared.epoch();
        if let Err(e) = blocking(shared, move |s| {
            s.world.store.run_settle_queued(id, &end, epoch)
        })
        .await
        {
            error!(cause = %e.message, "failed to cancel a run whose job is gone");
        }
        shared.run_changed(id);
        return None;
    };
    let new = NewRun {
        parent_id: run.parent_id,
        params: run.params.clone(),
        ..NewRun::of(
            &job,
            Trigger::After,
            &run.machine_id,
            &shared.me.boot_id,
            shared.world.clock.now(),
        )
    };
    // Its log path was written with its row.
    let log_path = std::path::PathBuf::from(&run.log_path);
    let plan = shared
        .runs
        .planner
        .plan(&job.spec, &new, id, &log_path, &run.idempotency_key);
    let here = job.spec.hosts.is_empty()
        || !shared.world.store.is_shared()
        || job.spec.hosts.contains(&shared.me.host_name);
    Some(match here {
        true => Planned::Here {
            plan,
            replaces: job.spec.concurrency == Concurrency::Replace,
        },
        false => Planned::Elsewhere(plan),
    })
}
