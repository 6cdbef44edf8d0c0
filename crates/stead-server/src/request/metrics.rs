//! What `/metrics` exposes, in the Prometheus (OpenMetrics) text format.
//!
//! Two kinds of figures. Counts of runs come from the ledger at each scrape, so they are
//! true across restarts and for runs this process never saw (`stead_runs`, and the
//! interrupted, resumed and caught-up runs among them). Events only this process sees —
//! fire lag, gate waits, lease renewals, monitors watched — are counted in memory from
//! the moment the server started, as Prometheus counters and histograms are meant to be.

use std::time::Duration;

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::encoding::text::encode;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::Registry;
use stead_protocol::Trigger;

use stead_core::records::RunCount;

/// Buckets from a millisecond to an hour: fire lag spans both (a busy machine, a catch-up).
const LAG_BUCKETS: [f64; 16] = [
    0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 10.0, 60.0, 300.0, 900.0,
    3600.0,
];

/// Buckets for gate waits: from "ready at once" to the longest wait the CLI allows.
const WAIT_BUCKETS: [f64; 12] = [
    0.001, 0.01, 0.1, 0.5, 1.0, 5.0, 15.0, 30.0, 60.0, 300.0, 900.0, 3600.0,
];

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct TriggerLabel {
    trigger: &'static str,
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct OutcomeLabel {
    outcome: &'static str,
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RunLabels {
    job: String,
    status: &'static str,
    trigger: &'static str,
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct JobLabel {
    job: String,
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct DebtLabels {
    job: String,
    /// `owed` while no resume or receipt settled it, `settled` after.
    state: &'static str,
}

/// The in-memory figures. Clones share their values (prometheus-client metrics are
/// handles), so a scrape registers the same handles the server updates.
#[derive(Debug)]
pub struct Metrics {
    fire_lag: Family<TriggerLabel, Histogram>,
    gate_waits: Family<OutcomeLabel, Counter>,
    gate_wait_seconds: Histogram,
    lease_renewals: Family<OutcomeLabel, Counter>,
    monitors: Gauge,
}

impl Default for Metrics {
    fn default() -> Self {
        Self {
            fire_lag: Family::new_with_constructor(|| Histogram::new(LAG_BUCKETS)),
            gate_waits: Family::default(),
            gate_wait_seconds: Histogram::new(WAIT_BUCKETS),
            lease_renewals: Family::default(),
            monitors: Gauge::default(),
        }
    }
}

/// Decrements the monitor gauge when the watch on one monitor ends, however it ends.
#[derive(Debug)]
pub struct Watching(Gauge);

impl Drop for Watching {
    fn drop(&mut self) {
        self.0.dec();
    }
}

impl Metrics {
    /// A fire was admitted to the ledger `lag` after its scheduled time.
    pub fn fire_admitted(&self, trigger: Trigger, lag: Duration) {
        self.fire_lag
            .get_or_create(&TriggerLabel {
                trigger: trigger.as_str(),
            })
            .observe(lag.as_secs_f64());
    }

    /// A gate wait ended, ready to restart or deferred, after `waited`.
    pub fn gate_waited(&self, ready: bool, waited: Duration) {
        let outcome = if ready { "ready" } else { "deferred" };
        self.gate_waits
            .get_or_create(&OutcomeLabel { outcome })
            .inc();
        self.gate_wait_seconds.observe(waited.as_secs_f64());
    }

    /// A lease renewal was attempted: `renewed`, `failed` (retried next beat) or `lost`.
    pub fn lease_renewal(&self, outcome: &'static str) {
        self.lease_renewals
            .get_or_create(&OutcomeLabel { outcome })
            .inc();
    }

    /// The server begins watching a monitor; the gauge falls again when the guard drops.
    pub fn watching_monitor(&self) -> Watching {
        self.monitors.inc();
        Watching(self.monitors.clone())
    }

    /// The whole exposition: the ledger's counts (read by the caller) and this process's
    /// figures.
    pub fn render(&self, counts: &[RunCount], jobs: usize) -> String {
        let mut registry = Registry::with_prefix("stead");

        let runs = Family::<RunLabels, Gauge>::default();
        let interrupted = Family::<DebtLabels, Gauge>::default();
        let resumes = Family::<JobLabel, Gauge>::default();
        let catch_ups = Family::<JobLabel, Gauge>::default();
        for count in counts {
            let n = i64::try_from(count.count).unwrap_or(i64::MAX);
            runs.get_or_create(&RunLabels {
                job: count.job.clone(),
                status: count.status.as_str(),
                trigger: count.trigger.as_str(),
            })
            .inc_by(n);
            let job = JobLabel {
                job: count.job.clone(),
            };
            if count.status == stead_protocol::RunStatus::Interrupted {
                interrupted
                    .get_or_create(&DebtLabels {
                        job: count.job.clone(),
                        state: if count.resolved { "settled" } else { "owed" },
                    })
                    .inc_by(n);
            }
            match count.trigger {
                Trigger::Resume => {
                    resumes.get_or_create(&job).inc_by(n);
                }
                Trigger::CatchUp => {
                    catch_ups.get_or_create(&job).inc_by(n);
                }
                Trigger::Scheduled | Trigger::OnDemand | Trigger::Retry | Trigger::After => {}
            }
        }
        registry.register(
            "runs",
            "Runs in the ledger, by job, status and trigger",
            runs,
        );
        registry.register(
            "interrupted_runs",
            "Runs cut by a crash, reboot, stop or restart (not failures), owed or settled",
            interrupted,
        );
        registry.register(
            "resume_runs",
            "Runs in the ledger that resume an interrupted run",
            resumes,
        );
        registry.register(
            "catch_up_runs",
            "Runs in the ledger that make up for fires missed while down or asleep",
            catch_ups,
        );
        let job_gauge = Gauge::<i64>::default();
        job_gauge.set(i64::try_from(jobs).unwrap_or(i64::MAX));
        registry.register("jobs", "Jobs defined", job_gauge);

        registry.register(
            "fire_lag_seconds",
            "Time from a fire's scheduled instant to its run being admitted to the ledger",
            self.fire_lag.clone(),
        );
        registry.register(
            "gate_waits",
            "Readiness long-polls by outcome (ready, or deferred with something still to cut); one `stead gate` makes one per change it waits through",
            self.gate_waits.clone(),
        );
        registry.register(
            "gate_wait_seconds",
            "How long readiness long-polls lasted",
            self.gate_wait_seconds.clone(),
        );
        registry.register(
            "lease_renewals",
            "Lease renewals by outcome (renewed, failed and retried, lost to a successor)",
            self.lease_renewals.clone(),
        );
        registry.register(
            "monitors",
            "Run monitors this server is watching",
            self.monitors.clone(),
        );

        let mut text = String::new();
        encode(&mut text, &registry).expect("writing to a String cannot fail");
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use stead_protocol::RunStatus;

    fn count(job: &str, status: RunStatus, trigger: Trigger, resolved: bool, n: u64) -> RunCount {
        RunCount {
            job: job.into(),
            status,
            trigger,
            resolved,
            count: n,
        }
    }

    #[test]
    fn ledger_counts_and_process_figures_are_exposed() {
        let m = Metrics::default();
        m.fire_admitted(Trigger::Scheduled, Duration::from_millis(3));
        m.gate_waited(false, Duration::from_secs(2));
        m.lease_renewal("renewed");
        m.lease_renewal("renewed");
        let watching = m.watching_monitor();
        let text = m.render(
            &[
                count("backup", RunStatus::Succeeded, Trigger::Scheduled, false, 7),
                count(
                    "backup",
                    RunStatus::Interrupted,
                    Trigger::Scheduled,
                    false,
                    1,
                ),
                count("backup", RunStatus::Interrupted, Trigger::OnDemand, true, 2),
                count("backup", RunStatus::Succeeded, Trigger::Resume, false, 2),
                count("sync", RunStatus::Failed, Trigger::CatchUp, false, 1),
            ],
            2,
        );
        for line in [
            r#"stead_runs{job="backup",status="succeeded",trigger="scheduled"} 7"#,
            r#"stead_interrupted_runs{job="backup",state="owed"} 1"#,
            r#"stead_interrupted_runs{job="backup",state="settled"} 2"#,
            r#"stead_resume_runs{job="backup"} 2"#,
            r#"stead_catch_up_runs{job="sync"} 1"#,
            "stead_jobs 2",
            r#"stead_fire_lag_seconds_bucket{le="0.005",trigger="scheduled"} 1"#,
            r#"stead_gate_waits_total{outcome="deferred"} 1"#,
            r#"stead_lease_renewals_total{outcome="renewed"} 2"#,
            "stead_monitors 1",
            "# EOF",
        ] {
            assert!(
                text.lines().any(|l| l == line),
                "missing {line:?} in\n{text}"
            );
        }
        drop(watching);
        let text = m.render(&[], 0);
        assert!(text.lines().any(|l| l == "stead_monitors 0"), "{text}");
    }
}
