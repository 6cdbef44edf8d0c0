//! Waiting for what a run needs of the machine before its command starts, and keeping
//! the machine awake while it runs (see `stead_core::conditions`).
//!
//! The run is marked running first, so it is on the ledger the whole time it waits; a
//! cancel or a stop ends the wait, and the run then ends before its command started.
//! A fire on battery is deferred until mains power (at most until its catch-up window
//! closes, then skipped) or skipped at once; a run that needs the network waits for a
//! route out (and its check host) at most its `network_wait`, then goes on. What it
//! waited for is recorded with its end.

use std::time::{Duration, Instant};

use jiff::Timestamp;
use stead_core::conditions::{Conditions, NetworkNeed, PowerNeed};
use stead_core::runs::Waited;
use stead_protocol::OnBattery;
use stead_protocol::units::format_delay;
use stead_sys::power::Source;

use crate::log::Log;
use crate::signals::SignalPipe;

/// How often the power source is read while a fire is deferred.
const POWER_POLL: Duration = Duration::from_millis(500);
/// How often the route out is looked for while a run waits for the network.
const NETWORK_POLL: Duration = Duration::from_millis(250);
/// How long a check host has to accept a connection.
const CHECK_TIMEOUT: Duration = Duration::from_secs(2);

/// What the wait came to.
#[derive(Debug)]
pub enum Gate {
    /// Start the command (a stop that came meanwhile is the caller's to see), having
    /// waited this much.
    Go(Option<Waited>),
    /// Record the fire skipped, for this reason, having waited this much.
    Skip(String, Option<Waited>),
}

/// Waits for what `conditions` need, noting it in `log`.
pub fn wait(conditions: &Conditions, signals: &mut SignalPipe, log: &mut Log) -> Gate {
    let mut waits = Vec::new();
    if let Some(power) = &conditions.power {
        match wait_for_mains(power, signals, log) {
            Ok(waited) => waits.extend(waited),
            Err((reason, waited)) => {
                log.note(&reason);
                return Gate::Skip(reason, joined(waits.into_iter().chain(waited)));
            }
        }
    }
    if let Some(network) = &conditions.network
        && !signals.pending()
    {
        waits.extend(wait_for_network(network, signals, log));
    }
    Gate::Go(joined(waits))
}

fn joined(waits: impl IntoIterator<Item = Waited>) -> Option<Waited> {
    waits.into_iter().reduce(|a, b| Waited {
        ms: a.ms + b.ms,
        note: format!("{}; {}", a.note, b.note),
    })
}

fn source(power: &PowerNeed, log: &mut Log) -> Source {
    match stead_sys::power::source(power.supplies.as_deref()) {
        Ok(source) => source,
        Err(e) => {
            // Unreadable: taken for mains, so that nothing is held back by a fault.
            log.note(&format!(
                "cannot read the power source ({e}): taken for mains"
            ));
            Source::Mains
        }
    }
}

/// Mains power, waited for under `defer`: `Ok` with the wait (if any) once on mains (or
/// when a signal came), `Err` with the skip's reason.
fn wait_for_mains(
    power: &PowerNeed,
    signals: &mut SignalPipe,
    log: &mut Log,
) -> Result<Option<Waited>, (String, Option<Waited>)> {
    if source(power, log) == Source::Mains {
        return Ok(None);
    }
    if power.on_battery == OnBattery::Skip {
        return Err((
            "skipped: the machine is on battery power (on_battery = skip)".into(),
            None,
        ));
    }
    let until = power.until.map(|m| m.timestamp());
    log.note(&match until {
        Some(until) => format!("deferred: on battery power; waiting for mains until {until}"),
        None => "deferred: on battery power; waiting for mains".into(),
    });
    let began = Instant::now();
    let waited = |began: Instant| {
        let d = began.elapsed();
        Waited {
            ms: u64::try_from(d.as_millis()).unwrap_or(u64::MAX),
            note: format!("deferred {} on battery power", format_delay(d)),
        }
    };
    loop {
        let now = Timestamp::now();
        if until.is_some_and(|until| now >= until) {
            let w = waited(began);
            return Err((
                format!(
                    "skipped: still on battery power when its catch-up window closed \
                     ({})",
                    w.note
                ),
                Some(w),
            ));
        }
        let next = now.checked_add(POWER_POLL).unwrap_or(Timestamp::MAX);
        signals.wait_until(until.map_or(next, |u| next.min(u)));
        if signals.pending() {
            return Ok(Some(waited(began)));
        }
        if source(power, log) == Source::Mains {
            let w = waited(began);
            log.note(&format!("on mains power: starting ({})", w.note));
            return Ok(Some(w));
        }
    }
}

/// Whether the network is there as `need` asks: a route out, or its check host answers.
fn network_up(need: &NetworkNeed) -> bool {
    match &need.check {
        Some(check) => stead_sys::network::answers(check, CHECK_TIMEOUT),
        None => stead_sys::network::has_route_out(),
    }
}

/// Waits for the network at most `need.wait_ms` (counted while the machine is awake):
/// the wait, if there was one.
fn wait_for_network(need: &NetworkNeed, signals: &mut SignalPipe, log: &mut Log) -> Option<Waited> {
    if network_up(need) {
        return None;
    }
    let what = match &need.check {
        Some(check) => format!("a route out and {check}"),
        None => "a route out".to_string(),
    };
    let limit = Duration::from_millis(need.wait_ms);
    log.note(&format!(
        "waiting for the network ({what}), at most {}",
        format_delay(limit)
    ));
    let began = Instant::now();
    let ms = |d: Duration| u64::try_from(d.as_millis()).unwrap_or(u64::MAX);
    loop {
        let left = limit.saturating_sub(began.elapsed());
        if left.is_zero() {
            let note = format!("went on without network after {}", format_delay(limit));
            log.note(&note);
            return Some(Waited {
                ms: ms(began.elapsed()),
                note,
            });
        }
        let now = Timestamp::now();
        signals.wait_until(now.checked_add(NETWORK_POLL.min(left)).unwrap_or(now));
        if signals.pending() {
            return Some(Waited {
                ms: ms(began.elapsed()),
                note: format!("stopped while waiting for the network ({what})"),
            });
        }
        if network_up(need) {
            let d = began.elapsed();
            let note = format!("waited {} for the network", format_delay(d));
            log.note(&note);
            return Some(Waited { ms: ms(d), note });
        }
    }
}

/// Holds a sleep inhibitor for the life of this monitor's run, if it asks for one; says
/// in `log` whether it got one. The sweep of the run's processes spares its helper.
pub fn keep_awake(conditions: &Conditions, run_id: i64, log: &mut Log) -> Option<Awake> {
    if !conditions.keep_awake {
        return None;
    }
    match stead_sys::inhibit::hold(std::process::id(), &format!("stead run {run_id}")) {
        Ok(inhibitor) => {
            crate::sweep::spare_group(Some(inhibitor.group()));
            log.note("keeping the machine awake: a sleep inhibitor is held while the run is live");
            Some(Awake { _held: inhibitor })
        }
        Err(why) => {
            log.note(&format!(
                "{why}; the run goes on, and the machine may sleep under it"
            ));
            None
        }
    }
}

/// A held sleep inhibitor, let go (and its helper no longer spared) when dropped.
pub struct Awake {
    _held: stead_sys::inhibit::Inhibitor,
}

impl Drop for Awake {
    fn drop(&mut self) {
        crate::sweep::spare_group(None);
    }
}
