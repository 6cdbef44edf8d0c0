//! The scheduler: sleeps until the next fire of any enabled job (or until jobs change),
//! then records and starts the runs that are due.
//!
//! It keeps wall time: it sleeps through [`Clock::sleep_until`](stead_core::clock::Clock),
//! which notices a wall-clock jump, and on every wake asks [`due_fires`] which fires in
//! `(handled, now]` run on time and which were missed. Recording a fire advances the
//! job's `fired_through` in the same transaction, and the ledger allows one run per (job,
//! scheduled time), so no fire is recorded twice whatever happens. Each pass first samples
//! the clocks (`sleeps`), so a fire missed in a sleep says which.

use std::sync::Arc;

use jiff::{SignedDuration, Timestamp};
use stead_client::config::{FIRE_LEAD_MAX, FIRE_LEAD_PER_FIRE};
use stead_protocol::{Concurrency, Run, Trigger};
use tracing::{debug, error, info, warn};

use crate::request::ledger_calls::{blocking, in_flight};
use crate::runs;
use crate::runs::spawner::WARM_AHEAD;
use crate::shared::Shared;
use stead_core::clock::rfc3339;
use stead_core::conditions;
use stead_core::jobs::CatchUpPolicy;
use stead_core::jobs::JobTiming;
use stead_core::jobs::timing::{due_fires, paused_fires};
use stead_core::records::{Fence, NewRun, SkippedFire, StoredJob};

pub async fn run(shared: Arc<Shared>) {
    let mut leader = shared.leader.subscribe();
    loop {
        // Only the leader schedules: every host's server waits here until it leads.
        let epoch = tokio::select! {
            () = shared.stop.cancelled() => return,
            led = leader.wait_for(Option::is_some) => match led {
                Ok(epoch) => epoch.expect("waited for a leader epoch"),
                Err(_) => return,
            },
        };
        schedule(&shared, epoch, &mut leader).await;
        if shared.stop.is_cancelled() {
            return;
        }
    }
}

/// Schedules while `epoch` leads.
async fn schedule(
    shared: &Arc<Shared>,
    epoch: i64,
    leader: &mut tokio::sync::watch::Receiver<Option<i64>>,
) {
    let shared = shared.clone();
    // On becoming leader nothing was waited for: every fire before now was missed.
    let mut awake_since = shared.world.clock.now();
    let mut passed = false;
    loop {
        // Registered before reading the jobs, so a change made meanwhile is not missed.
        let changed = shared.wake.jobs_changed.notified();
        // A sleep just woken from is noticed before the fires it made miss are recorded,
        // so that they can name it.
        crate::tasks::sleeps::observe(&shared).await;
        let now = shared.world.clock.now();
        let mut ended = shared.run_events.subscribe();
        let machine = shared.world.machine_id.clone();
        let listed = blocking(&shared, move |s| {
            let busy: Vec<String> = if s.world.store.is_shared() {
                // A job's run in flight may be on any host.
                in_flight(&s.world.store)?
                    .into_iter()
                    .map(|r| r.job)
                    .collect()
            } else {
                s.world
                    .store
                    .runs_active(&machine)?
                    .into_iter()
                    .map(|r| r.job)
                    .collect()
            };
            let restarting = s.world.store.services_restarting()?;
            Ok((s.world.store.job_list()?, restarting, busy))
        })
        .await;
        let (jobs, restarting, busy) = match listed {
            Ok(listed) => listed,
            Err(e) => {
                error!(cause = %e.message, "scheduler failed to read the jobs; retrying in a second");
                tokio::time::sleep(std::time::Duration::from_secs(1)).await;
                continue;
            }
        };
        let mut waiting_for_a_run = false;
        // Each job's next fire still to come, and whether it may be admitted ahead of
        // its instant (see `stage`).
        let mut coming: Vec<Coming<'_>> = Vec::new();
        for job in jobs.iter().filter(|j| j.spec.enabled) {
            if job.spec.depends_on.iter().any(|d| restarting.contains(d)) {
                // Its service is being restarted: its fires wait until the service is
                // ready again (the end of the restart wakes this loop).
                continue;
            }
            let timing = match JobTiming::of(&job.spec, job.anchor) {
                Ok(timing) => timing,
                Err(e) => {
                    warn!(job = %job.spec.name, cause = %e, "job has an unreadable schedule");
                    continue;
                }
            };
            let in_flight = busy.contains(&job.spec.name);
            let handled = job.fired_through.unwrap_or(job.created_at);
            // Nothing of it was due: its next fire may be staged ahead of its instant.
            let quiet = timing.next_after(handled).is_none_or(|at| at > now);
            waiting_for_a_run |= fire_due(&shared, job, &timing, now, awake_since, in_flight).await;
            if let Some(at) = timing.next_after(now.max(handled)) {
                coming.push(Coming {
                    job,
                    at,
                    then: timing.next_after(at),
                    stageable: quiet && stageable(job, at, in_flight),
                });
            }
        }
        let lead = lead(&shared, &coming);
        let staged = stage(&shared, &coming, now, lead).await;
        shared.passed(&mut passed);
        // The next fire not yet staged, and the next wake: a lead before it (and, where
        // no spawner may be running by then, when one is to be started for it).
        let next_fire = coming
            .iter()
            .filter(|c| !staged.contains(&c.job.id))
            .map(|c| c.at)
            .chain(
                coming
                    .iter()
                    .filter(|c| staged.contains(&c.job.id))
                    .filter_map(|c| c.then),
            )
            .min();
        let next_wake = next_fire
            .map(|at| {
                let ahead = coming.iter().filter(|c| c.at == at).count().max(1);
                at.checked_sub(lead_of(&shared, ahead)).unwrap_or(at)
            })
            .into_iter()
            .chain(spawner_ahead(&shared, next_fire, now))
            .min();
        awake_since = now;
        debug!(next = ?next_wake.map(rfc3339), "scheduler sleeping");
        let clock = shared.world.clock.clone();
        tokio::select! {
            () = shared.stop.cancelled() => return,
            _ = leader.changed() => {
                if *leader.borrow() != Some(epoch) {
                    return;
                }
            }
            () = changed => {}
            () = async {
                match next_wake {
                    Some(at) => clock.sleep_until(at).await,
                    None => std::future::pending().await,
                }
            } => {}
            // Missed fires queued behind a run in flight go on when a run ends.
            _ = ended.recv(), if waiting_for_a_run => {}
        }
    }
}

/// A job's next fire still to come.
struct Coming<'a> {
    job: &'a StoredJob,
    at: Timestamp,
    /// The fire after it, the next to wait for once this one is staged.
    then: Option<Timestamp>,
    /// It may be admitted ahead of its instant.
    stageable: bool,
}

/// Whether a fire of `job` at `at` may be admitted ahead of its instant: only where the
/// outcome cannot depend on what happens before it. Not while the job has a run in flight
/// under `forbid` or `replace` (that run may end first), not in a pause that covers it
/// (the fire is then recorded skipped at its instant).
fn stageable(job: &StoredJob, at: Timestamp, in_flight: bool) -> bool {
    let overlap_matters = job.spec.concurrency != Concurrency::Allow && in_flight;
    let paused = job.paused_until.is_some_and(|until| at < until);
    // A fire with jitter waits for its delay in the ledger (see `delayed`), not in a
    // monitor readied ahead.
    let jittered = job.spec.jitter.is_some();
    !overlap_matters && !paused && !jittered
}

/// `new`, a fire that runs, written waiting for its delay, if it has one: a fire on time
/// for its jitter, a catch-up for its place in the spread of the catch-ups that came due
/// at one wake (so they do not all start in the same second). The starter hands it to a
/// monitor once its time comes; the row is on the ledger meanwhile, and a server that
/// stops leaves it waiting for the next.
fn delayed(shared: &Shared, job: &StoredJob, mut new: NewRun, now: Timestamp) -> NewRun {
    let at = conditions::not_before(
        &job.spec,
        new.trigger,
        new.scheduled_at,
        now,
        &shared.me.host_name,
        shared.world.config.timings.wake_spread,
    );
    if at.is_some() {
        new.waiting = true;
        new.not_before = at;
    }
    new
}

/// Readies the spawner of monitors for `next_fire`: once the fire is [`WARM_AHEAD`]
/// away, one is started where none runs, and kept until just past the fire. Returns
/// when to wake for that, while the fire is further away.
fn spawner_ahead(
    shared: &Arc<Shared>,
    next_fire: Option<Timestamp>,
    now: Timestamp,
) -> Option<Timestamp> {
    if !stead_sys::spawn::FORK_SERVER {
        return None;
    }
    let fire = next_fire?;
    let warm_at = fire.checked_sub(WARM_AHEAD).unwrap_or(fire);
    if warm_at > now {
        return Some(warm_at);
    }
    // The fire asks for its monitor a lead before its instant: kept a second past it.
    let until = fire.duration_since(now).unsigned_abs() + std::time::Duration::from_secs(1);
    shared
        .runs
        .spawner
        .keep_until(std::time::Instant::now() + until);
    runs::warm_spawner(shared);
    None
}

/// How far ahead of their instant fires are admitted now: the configured lead, and more
/// for a burst of fires at one instant (their monitors take that long to ready).
fn lead(shared: &Shared, coming: &[Coming<'_>]) -> SignedDuration {
    let Some(first) = coming.iter().map(|c| c.at).min() else {
        return lead_of(shared, 1);
    };
    lead_of(shared, coming.iter().filter(|c| c.at == first).count())
}

fn lead_of(shared: &Shared, fires: usize) -> SignedDuration {
    let base = shared.world.config.timings.fire_lead;
    let extra = FIRE_LEAD_PER_FIRE
        .saturating_mul(u32::try_from(fires.saturating_sub(1)).unwrap_or(u32::MAX));
    SignedDuration::try_from(base.saturating_add(extra).min(FIRE_LEAD_MAX)).unwrap_or_default()
}

/// Admits, in one transaction, every stageable fire due within `lead` of `now`, each to
/// start on its instant (its monitor waits for it); answers the jobs staged. Should the
/// batch be refused (a fire recorded already, a fence), each is admitted alone, so that
/// one refusal costs the others nothing.
async fn stage(
    shared: &Arc<Shared>,
    coming: &[Coming<'_>],
    now: Timestamp,
    lead: SignedDuration,
) -> Vec<i64> {
    let horizon = now.checked_add(lead).unwrap_or(now);
    let due: Vec<&Coming<'_>> = coming
        .iter()
        .filter(|c| c.stageable && c.at <= horizon)
        .collect();
    if due.is_empty() {
        return Vec::new();
    }
    let fires = due
        .iter()
        .map(|c| runs::Fire {
            job: c.job.clone(),
            new: fire_row(shared, c.job, c.at, Trigger::Scheduled),
        })
        .collect();
    match runs::start_fires(shared, fires).await {
        Ok(admitted) => {
            for (c, run) in due.iter().zip(&admitted) {
                fired(shared, c.job, c.at, Trigger::Scheduled, run, now);
            }
            due.iter().map(|c| c.job.id).collect()
        }
        Err(e) => {
            warn!(cause = %e.message, fires = due.len(), "fires ahead of their instant were refused together; admitting each alone");
            let mut staged = Vec::new();
            for c in due {
                let new = fire_row(shared, c.job, c.at, Trigger::Scheduled);
                match runs::start(shared, c.job, new).await {
                    Ok(run) => {
                        fired(shared, c.job, c.at, Trigger::Scheduled, &run, now);
                        staged.push(c.job.id);
                    }
                    Err(e) => {
                        error!(job = %c.job.spec.name, cause = %e.message, "failed to record a fire")
                    }
                }
            }
            staged
        }
    }
}

/// Tells of a fire admitted (the log line, and the lag from its instant to the admission,
/// negative ahead of it, for /metrics).
fn fired(
    shared: &Shared,
    job: &StoredJob,
    at: Timestamp,
    trigger: Trigger,
    run: &Run,
    since: Timestamp,
) {
    let lag = since.duration_since(at);
    shared
        .metrics
        .fire_admitted(trigger, lag.try_into().unwrap_or_default());
    info!(
        job = %job.spec.name,
        run = run.id,
        scheduled_at = %rfc3339(at),
        trigger = trigger.as_str(),
        status = run.status.as_str(),
        "fired"
    );
}

/// The row of a fire of `job` at `at`: recording it moves the job's `fired_through` to
/// it, fenced by the scheduler's leadership.
fn fire_row(shared: &Shared, job: &StoredJob, at: Timestamp, trigger: Trigger) -> NewRun {
    NewRun {
        scheduled_at: Some(at),
        fired_through: Some(at),
        fence: Fence::Leader,
        ..NewRun::of(
            job,
            trigger,
            shared.queue_host(),
            &shared.me.boot_id,
            shared.world.clock.now(),
        )
    }
}

/// Records fires not run (oldest first) when nothing runs with them: the latest is the
/// admitted row, the rest ride in its transaction. Answers the latest fire so handled
/// (`None` when there were none), or `Err` when nothing was written, so that all of them
/// stay due for the next pass.
async fn record_not_run(
    shared: &Arc<Shared>,
    job: &StoredJob,
    mut rows: Vec<SkippedFire>,
) -> Result<Option<Timestamp>, ()> {
    let Some(latest) = rows.pop() else {
        return Ok(None);
    };
    let count = latest.count + rows.iter().map(|f| f.count).sum::<usize>();
    let reason = latest.reason(None);
    let new = NewRun {
        missed: latest.why.iter().any(|(why, _)| why.is_miss()),
        skip_reason: Some(reason.clone()),
        skipped_fires: rows,
        ..fire_row(shared, job, latest.at, latest.trigger)
    };
    match runs::start(shared, job, new).await {
        Ok(run) => {
            info!(
                job = %job.spec.name, run = run.id, count, reason = %reason,
                "fires not run recorded skipped"
            );
            Ok(Some(latest.at))
        }
        Err(e) => {
            error!(job = %job.spec.name, cause = %e.message, "failed to record fires not run");
            Err(())
        }
    }
}

/// Records and starts the job's due fires. Returns true when missed fires are left for
/// later: with concurrency `forbid` catch-up runs go one after another, each once the
/// job has no run in flight (`in_flight`).
async fn fire_due(
    shared: &Arc<Shared>,
    job: &StoredJob,
    timing: &JobTiming,
    now: Timestamp,
    awake_since: Timestamp,
    in_flight: bool,
) -> bool {
    let mut handled = job.fired_through.unwrap_or(job.created_at);
    if let Some(until) = job.paused_until.filter(|until| *until > handled) {
        match record_not_run(shared, job, paused_fires(timing, handled, now, until)).await {
            Ok(through) => handled = handled.max(through.unwrap_or(handled)),
            Err(()) => return false,
        }
        if now < until {
            return false;
        }
    }
    let due = due_fires(
        timing,
        handled,
        now,
        awake_since,
        CatchUpPolicy::of(&job.spec),
    );
    if due.coalesced > 0 {
        info!(
            job = %job.spec.name,
            coalesced = due.coalesced,
            "missed fires coalesced into one catch-up run"
        );
    }
    let mut runs = due.runs;
    let catching_up = runs.iter().filter(|(_, t)| *t == Trigger::CatchUp).count();
    let forbid = job.spec.concurrency == Concurrency::Forbid;
    if forbid && catching_up > 0 && in_flight {
        // Owed fires wait for the run in flight rather than be skipped as an overlap.
        return true;
    }
    let one_at_a_time = forbid && catching_up > 1;
    if one_at_a_time {
        // The rest stay due (fired_through stops at this one) and run after it ends.
        runs.truncate(1);
    }
    // Every fire not run gets its own skipped row, in the same transaction as the first
    // run of this pass (the catch-up run a coalesced fire names), or, when nothing runs,
    // as the row of the latest fire not run. A fire not run is older than every fire
    // that runs (history before the window, the cap's oldest, coalesced before the
    // latest, and anything missed before anything on time), so that transaction moves
    // fired_through past all of them; the max below only keeps that so if it ever
    // were not.
    let mut skipped = due.skipped;
    for fire in &mut skipped {
        fire.slept = shared.sleeps.during(fire.at);
    }
    let not_run: usize = skipped.iter().map(|f| f.count).sum();
    let mut carried = false;
    if runs.is_empty() {
        return match record_not_run(shared, job, skipped).await {
            Ok(_) => one_at_a_time,
            Err(()) => false,
        };
    }
    for (at, trigger) in &runs {
        let mut new = delayed(shared, job, fire_row(shared, job, *at, *trigger), now);
        if !carried && !skipped.is_empty() {
            carried = true;
            let latest = skipped.iter().map(|f| f.at).max().unwrap_or(*at);
            new.fired_through = Some(latest.max(*at));
            new.skipped_fires = std::mem::take(&mut skipped);
        }
        let carrying = new.skipped_fires.len();
        match runs::start(shared, job, new).await {
            Ok(run) => {
                if carrying > 0 {
                    info!(
                        job = %job.spec.name, run = run.id, rows = carrying, count = not_run,
                        "fires not run recorded skipped"
                    );
                }
                fired(shared, job, *at, *trigger, &run, shared.world.clock.now());
            }
            Err(e) => {
                error!(job = %job.spec.name, cause = %e.message, "failed to record a fire");
                if carrying > 0 {
                    // Its fires not run went undone with it: later runs would move
                    // fired_through past them, so leave the rest of the pass due.
                    return false;
                }
            }
        }
    }
    one_at_a_time
}
