//! The figures as a table for people and as a JSON object for scripts.

use std::fmt::Write;

use serde_json::{Value, json};

use crate::figures::{Cold, Idle, Stats};

pub struct Report {
    pub stead: String,
    pub stead_version: String,
    pub pueue_version: Option<String>,
    pub warm: Stats,
    pub pueue_warm: Option<Stats>,
    pub cold: Cold,
    pub recovery: Stats,
    pub idle: Idle,
    pub pueue_idle: Option<Idle>,
}

const NOT_FOUND: &str = "pueue: not found (cargo install pueue)";

impl Report {
    pub fn table(&self) -> String {
        let mut t = String::new();
        let pueue = self.pueue_version.as_deref().unwrap_or("pueue not found");
        let _ = writeln!(
            t,
            "stead {} ({}) vs {pueue}\n",
            self.stead_version, self.stead
        );
        let _ = writeln!(
            t,
            "{:<34} {:>5} {:>10} {:>10} {:>10}",
            "time (ms, whole client process)", "n", "median", "p90", "min"
        );
        let mut row = |name: &str, s: &Stats| {
            let _ = writeln!(
                t,
                "{name:<34} {:>5} {:>10.2} {:>10.2} {:>10.2}",
                s.n, s.median, s.p90, s.min
            );
        };
        row("warm round trip: stead status", &self.warm);
        if let Some(p) = &self.pueue_warm {
            row("warm round trip: pueue status", p);
        }
        row("cold start: fresh state dir", &self.cold.fresh);
        row("cold start: after stead stop", &self.cold.after_stop);
        row("cold start: all", &self.cold.all);
        row("recovery after SIGKILL", &self.recovery);
        match &self.pueue_warm {
            Some(p) => {
                let _ = writeln!(
                    t,
                    "{:<34} {:>5} {:>9.2}x {:>9.2}x {:>9.2}x",
                    "ratio pueue/stead (warm)",
                    "",
                    p.median / self.warm.median,
                    p.p90 / self.warm.p90,
                    p.min / self.warm.min
                );
            }
            None => {
                let _ = writeln!(t, "{NOT_FOUND}");
            }
        }

        let i = &self.idle;
        let title = format!("idle server, heartbeat {} ms", Idle::heartbeat_ms());
        let _ = writeln!(t, "\n{title:<34} {:>12} {:>12}", "stead", "pueued");
        let p = self.pueue_idle.as_ref();
        let mut line = |name: &str, f: &dyn Fn(&Idle) -> String| {
            let other = p.map_or_else(|| "-".to_string(), f);
            let _ = writeln!(t, "{name:<34} {:>12} {other:>12}", f(i));
        };
        let mib = |v: f64| format!("{v:.1} MiB");
        line("VmRSS after startup", &|x| mib(x.startup.0));
        line("VmHWM after startup", &|x| mib(x.startup.1));
        let calls = Idle::calls();
        line(&format!("VmRSS after {calls} status calls"), &|x| {
            mib(x.after_calls.0)
        });
        line(&format!("VmHWM after {calls} status calls"), &|x| {
            mib(x.after_calls.1)
        });
        line(
            &format!("context switches in {} s idle", i.window.as_secs()),
            &|x| x.switches.to_string(),
        );
        line("wake-ups per heartbeat (per 1 s)", &|x| {
            format!("{:.1}", x.per_heartbeat())
        });
        t
    }

    pub fn json(&self) -> Value {
        let idle = |x: &Idle| {
            json!({
                "rss_startup_mib": x.startup.0,
                "hwm_startup_mib": x.startup.1,
                "rss_after_calls_mib": x.after_calls.0,
                "hwm_after_calls_mib": x.after_calls.1,
                "calls": Idle::calls(),
                "context_switches": x.switches,
                "window_ms": x.window.as_millis() as u64,
                "wakeups_per_heartbeat": x.per_heartbeat(),
            })
        };
        let ratio = |f: fn(&Stats) -> f64| self.pueue_warm.as_ref().map(|p| f(p) / f(&self.warm));
        json!({
            "stead": { "path": self.stead, "version": self.stead_version },
            "pueue": { "version": self.pueue_version },
            "warm_round_trip_ms": {
                "stead": stats(&self.warm),
                "pueue": self.pueue_warm.as_ref().map(stats),
                "ratio_pueue_over_stead": {
                    "median": ratio(|s| s.median),
                    "p90": ratio(|s| s.p90),
                    "min": ratio(|s| s.min),
                },
            },
            "cold_start_ms": {
                "fresh_state_dir": stats(&self.cold.fresh),
                "after_stop": stats(&self.cold.after_stop),
                "all": stats(&self.cold.all),
            },
            "recovery_after_sigkill_ms": stats(&self.recovery),
            "idle": {
                "heartbeat_ms": Idle::heartbeat_ms(),
                "stead": idle(&self.idle),
                "pueued": self.pueue_idle.as_ref().map(idle),
            },
        })
    }
}

fn stats(s: &Stats) -> Value {
    json!({ "n": s.n, "median": s.median, "p90": s.p90, "min": s.min })
}
