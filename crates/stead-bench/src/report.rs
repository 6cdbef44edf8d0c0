//! The figures as a table for people and as a JSON object for scripts.

use std::fmt::Write;

use serde_json::{Value, json};

use crate::cluster::{
    Death, Failover, HEARTBEAT_MS, HOSTS, LEASE_MS, POLL_MS,
    RESUME_DELAY_MS as CLUSTER_RESUME_DELAY_MS, Repetition,
};
use crate::figures::{Cold, Idle, Stats};
use crate::recovery::{MACHINE_ID, RESUME_DELAY_MS, RESUME_TARGET_MS, Reconcile, Resume};
use crate::runs::{
    IDLE_CRON, IDLE_JOBS, LISTINGS, Latency, Listing, MONITOR_TARGET_MIB, Memory, Throughput,
};
use crate::web::{self, BROWSER_TARGET_MS, Browser, MEMORY_CLIENTS, MEMORY_RUNS};

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

/// The runs figures.
pub struct RunsReport {
    pub stead: String,
    pub stead_version: String,
    pub pueue_version: Option<String>,
    pub throughput: Throughput,
    pub pueue_throughput: Option<Throughput>,
    pub fires: usize,
    pub latency: Latency,
    pub listing: Listing,
    pub memory: Memory,
}

impl RunsReport {
    pub fn table(&self) -> String {
        let mut t = String::new();
        let pueue = self.pueue_version.as_deref().unwrap_or("pueue not found");
        let _ = writeln!(
            t,
            "stead {} ({}) vs {pueue}\n",
            self.stead_version, self.stead
        );

        let s = &self.throughput;
        let p = self.pueue_throughput.as_ref();
        let title = format!("{} on-demand runs of `true`", s.runs);
        let _ = writeln!(t, "{title:<50} {:>14} {:>14}", "stead", "pueue");
        let mut line = |name: &str, f: &dyn Fn(&Throughput) -> String| {
            let other = p.map_or_else(|| "-".to_string(), f);
            let _ = writeln!(t, "{name:<50} {:>14} {other:>14}", f(s));
        };
        line("submitted, one client process each (s)", &|x| {
            format!("{:.2}", x.submit.as_secs_f64())
        });
        line("until every run ended (s)", &|x| {
            format!("{:.2}", x.total.as_secs_f64())
        });
        line("runs/s", &|x| format!("{:.0}", x.per_second()));
        line("client process median / p90 (ms)", &|x| {
            format!("{:.2} / {:.2}", x.per_call.median, x.per_call.p90)
        });
        line("succeeded", &|x| format!("{}/{}", x.succeeded, x.runs));
        line("runs at once allowed", &|x| {
            x.parallel
                .map_or_else(|| "unlimited".to_string(), |n| n.to_string())
        });
        let other = if p.is_some() { "no" } else { "-" };
        let _ = writeln!(
            t,
            "{:<50} {:>14} {other:>14}",
            "state durable (fsync per transition)", "yes"
        );
        if p.is_none() {
            let _ = writeln!(t, "{NOT_FOUND}");
        }

        let _ = writeln!(
            t,
            "\n{:<50} {:>5} {:>8} {:>8} {:>8}",
            format!("fire-to-exec, every 1s, {} fires (ms)", self.fires),
            "n",
            "median",
            "p90",
            "min"
        );
        let row = |t: &mut String, name: &str, s: &Stats| {
            let _ = writeln!(
                t,
                "{name:<50} {:>5} {:>8.2} {:>8.2} {:>8.2}",
                s.n, s.median, s.p90, s.min
            );
        };
        let l = &self.latency;
        row(
            &mut t,
            "scheduled -> run row written (ms steps)",
            &l.created,
        );
        row(
            &mut t,
            "scheduled -> monitor marks running (ms steps)",
            &l.running,
        );
        row(&mut t, "scheduled -> probe process starts", &l.exec);

        let q = &self.listing;
        let _ = writeln!(
            t,
            "\n{:<50} {:>5} {:>8} {:>8} {:>8}",
            format!("{} runs in the ledger (ms, whole process)", q.rows),
            "n",
            "median",
            "p90",
            "min"
        );
        for (args, s) in LISTINGS.iter().zip([&q.newest, &q.filtered, &q.no_match]) {
            let name = format!("stead {}", args.join(" ").replace(" --json", ""));
            row(&mut t, &name, s);
        }

        let m = &self.memory;
        let _ = writeln!(
            t,
            "\n{:<50} {:>14} {:>14}",
            "memory (MiB)", "VmRSS", "VmHWM"
        );
        let mut mem = |name: &str, (rss, hwm): (f64, f64)| {
            let _ = writeln!(t, "{name:<50} {rss:>14.1} {hwm:>14.1}");
        };
        mem("idle server, no jobs", m.empty);
        mem(&format!("idle server, {IDLE_JOBS} jobs"), m.jobs);
        mem("one monitor, run `sleep 30`", m.monitor);
        let verdict = if m.monitor.0 < MONITOR_TARGET_MIB {
            "met"
        } else {
            "MISSED"
        };
        let _ = writeln!(
            t,
            "  monitor VmRSS = {:.1} anonymous (RssAnon) + {:.1} file-backed (RssFile); \
             Pss {:.1}\n  target: monitor VmRSS under {MONITOR_TARGET_MIB:.0} MB: {verdict}",
            m.monitor_anon, m.monitor_file, m.monitor_pss
        );

        let _ = writeln!(t, "\nnotes:");
        for note in NOTES {
            let _ = writeln!(t, "- {note}");
        }
        t
    }

    pub fn json(&self) -> Value {
        let throughput = |x: &Throughput| {
            json!({
                "runs": x.runs,
                "submit_s": x.submit.as_secs_f64(),
                "total_s": x.total.as_secs_f64(),
                "runs_per_s": x.per_second(),
                "client_process_ms": stats(&x.per_call),
                "succeeded": x.succeeded,
                "parallel": x.parallel,
            })
        };
        let l = &self.latency;
        let q = &self.listing;
        let m = &self.memory;
        json!({
            "stead": { "path": self.stead, "version": self.stead_version },
            "pueue": { "version": self.pueue_version },
            "throughput": {
                "stead": throughput(&self.throughput),
                "pueue": self.pueue_throughput.as_ref().map(throughput),
                "stead_ledger_durable": true,
                "pueue_state_durable": false,
            },
            "fire_to_exec_ms": {
                "fires": self.fires,
                "scheduled_to_row_written": stats(&l.created),
                "scheduled_to_running": stats(&l.running),
                "scheduled_to_probe_start": stats(&l.exec),
            },
            "runs_list_ms": {
                "ledger_rows": q.rows,
                "newest_limit_50": stats(&q.newest),
                "job_and_status_limit_50": stats(&q.filtered),
                "status_matching_none_limit_50": stats(&q.no_match),
            },
            "memory_mib": {
                "server_no_jobs": { "rss": m.empty.0, "hwm": m.empty.1 },
                "server_jobs": { "jobs": IDLE_JOBS, "cron": IDLE_CRON, "rss": m.jobs.0, "hwm": m.jobs.1 },
                "monitor": {
                    "rss": m.monitor.0,
                    "hwm": m.monitor.1,
                    "rss_anon": m.monitor_anon,
                    "rss_file": m.monitor_file,
                    "pss": m.monitor_pss,
                    "target_mib": MONITOR_TARGET_MIB,
                },
            },
            "notes": NOTES,
        })
    }
}

const NOTES: [&str; 5] = [
    "stead's ledger is durable: SQLite WAL with synchronous=FULL, an fsync for every \
     transition (admitted, running, ended); pueue keeps its state in memory and saves it \
     without fsync.",
    "pueue runs each command through `sh -c`; stead runs `true` directly. The bench polls \
     for the end every 2 ms: stead's ledger read-only, pueue with `pueue status --json`.",
    "fire-to-exec includes the probe's own process start (the monitor's fork and exec of \
     the small stead-bench binary, dynamic loading, up to its first line of main); the \
     ledger steps have millisecond resolution.",
    "the `stead runs` ledger is filled directly with SQLite while the server is stopped; \
     `--status failed` matches none of its runs, so the query reads the whole table.",
    "memory is read from /proc/PID/status once VmRSS is unchanged for 1 s; the jobs have \
     cron `0 3 1 1 *` in 5 zones, so none fires.",
];

/// The recovery figures.
pub struct RecoveryReport {
    pub stead: String,
    pub stead_version: String,
    pub resume: Resume,
    pub reconcile: Reconcile,
    pub fires: usize,
    pub latency: Latency,
}

impl RecoveryReport {
    pub fn table(&self) -> String {
        let mut t = String::new();
        let _ = writeln!(t, "stead {} ({})\n", self.stead_version, self.stead);
        let head = |t: &mut String, title: &str| {
            let _ = writeln!(
                t,
                "{title:<58} {:>5} {:>9} {:>9} {:>9}",
                "n", "median", "p90", "min"
            );
        };
        let row = |t: &mut String, name: &str, s: &Stats| {
            let _ = writeln!(
                t,
                "{name:<58} {:>5} {:>9.2} {:>9.2} {:>9.2}",
                s.n, s.median, s.p90, s.min
            );
        };

        let r = &self.resume;
        head(
            &mut t,
            &format!("server ready -> interrupted run resumed (ms, delay {RESUME_DELAY_MS})"),
        );
        row(&mut t, "stead status started -> answered (ready)", &r.ready);
        row(
            &mut t,
            "ready -> resume run's row written (ms steps)",
            &r.row,
        );
        row(
            &mut t,
            "ready -> resume run marked running (ms steps)",
            &r.running,
        );
        let verdict = |ms: f64| {
            if ms < RESUME_TARGET_MS {
                "met"
            } else {
                "MISSED"
            }
        };
        let _ = writeln!(
            t,
            "  target: resumed and running under {:.0} s after ready (median): {}",
            RESUME_TARGET_MS / 1e3,
            verdict(r.running.median)
        );

        let c = &self.reconcile;
        let _ = writeln!(t);
        head(
            &mut t,
            &format!(
                "{} runs + {} running (monitor gone) + {} owed (ms)",
                c.rows, c.running, c.owed
            ),
        );
        row(&mut t, "cold start: stead status, empty ledger", &c.empty);
        row(
            &mut t,
            &format!(
                "cold start: stead status, {}k runs + {} to settle",
                c.rows / 1000,
                c.running + c.owed
            ),
            &c.full,
        );
        let _ = writeln!(
            t,
            "{:<58} {:>5} {:>8.2}x {:>8.2}x {:>8.2}x",
            "  ratio to the empty ledger",
            "",
            c.full.median / c.empty.median,
            c.full.p90 / c.empty.p90,
            c.full.min / c.empty.min
        );
        row(
            &mut t,
            &format!(
                "cold start: stead status, {}k runs, nothing to settle",
                c.rows / 1000
            ),
            &c.settled,
        );
        row(
            &mut t,
            "log: first -> last \"reconciled a cut run\"",
            &c.reconcile,
        );
        row(
            &mut t,
            "log: first \"reconciled\" -> \"settled the runs owed\"",
            &c.settle,
        );
        row(
            &mut t,
            &format!("  of which {} resumes, first -> last", c.running),
            &c.resumes,
        );
        row(
            &mut t,
            &format!(
                "  of which {} declines (job removed), first -> last",
                c.owed
            ),
            &c.declines,
        );
        row(
            &mut t,
            &format!(
                "stead status started -> all {} settled (log)",
                c.running + c.owed
            ),
            &c.until_settled,
        );

        let l = &self.latency;
        let _ = writeln!(t);
        head(
            &mut t,
            &format!("fire-to-exec, every 1s, {} fires (ms)", self.fires),
        );
        row(
            &mut t,
            "scheduled -> run row written (ms steps)",
            &l.created,
        );
        row(
            &mut t,
            "scheduled -> monitor marks running (ms steps)",
            &l.running,
        );
        row(&mut t, "fire \u{2192} exec (re-measured)", &l.exec);

        let _ = writeln!(t, "\nnotes:");
        for note in RECOVERY_NOTES {
            let _ = writeln!(t, "- {note}");
        }
        t
    }

    pub fn json(&self) -> Value {
        let r = &self.resume;
        let c = &self.reconcile;
        let l = &self.latency;
        json!({
            "stead": { "path": self.stead, "version": self.stead_version },
            "server_env": { "STEAD_RESUME_DELAY_MS": RESUME_DELAY_MS, "STEAD_MACHINE_ID": MACHINE_ID },
            "resume_after_cancel_runs_ms": {
                "start_to_ready": stats(&r.ready),
                "ready_to_resume_row": stats(&r.row),
                "ready_to_resume_running": stats(&r.running),
                "target_ms": RESUME_TARGET_MS,
                "target_met": r.running.median < RESUME_TARGET_MS,
            },
            "reconcile_ms": {
                "ledger_rows": c.rows,
                "running_monitor_gone": c.running,
                "owed_job_removed": c.owed,
                "cold_start_empty": stats(&c.empty),
                "cold_start_large": stats(&c.full),
                "cold_start_large_nothing_to_settle": stats(&c.settled),
                "log_first_to_last_reconciled": stats(&c.reconcile),
                "log_first_reconciled_to_settled": stats(&c.settle),
                "log_first_to_last_resumed": stats(&c.resumes),
                "log_first_to_last_declined": stats(&c.declines),
                "status_start_to_settled": stats(&c.until_settled),
            },
            "fire_to_exec_ms": {
                "fires": self.fires,
                "scheduled_to_row_written": stats(&l.created),
                "scheduled_to_running": stats(&l.running),
                "scheduled_to_probe_start": stats(&l.exec),
            },
            "notes": RECOVERY_NOTES,
        })
    }
}

const RECOVERY_NOTES: [&str; 5] = [
    "every server here runs with STEAD_RESUME_DELAY_MS=0 and STEAD_MACHINE_ID set; \
     each resume repetition uses a fresh state directory; ready is when the `stead status` \
     process that started the server exited, on the bench's wall clock, compared with \
     ledger times in whole milliseconds (a negative value: the row came first).",
    "the first attempt of the resumed job execs `stead-bench hold DIR` (it sleeps); the \
     resume attempt exits at once.",
    "the large ledger is built once with SQLite while its server is stopped and copied \
     into a fresh state directory for every cold start (so the file is in the page cache); \
     the running rows name an exited process as monitor with start identity \
     'linux:gone:1' and the current boot id, the owed rows a removed job.",
    "the reconcile runs before the server answers, so it is inside the cold start; the \
     resume pass runs after; the server log's timestamps have microseconds, and the first \
     \"reconciled\" line is written after the first run is settled.",
    "fire-to-exec is the `runs` figure's code path, re-run: it includes the probe's own \
     process start.",
];

/// The web figures.
pub struct WebReport {
    pub stead: String,
    pub stead_version: String,
    pub stream: Stats,
    pub browser: Browser<Stats>,
    pub listing: web::Listing,
    pub memory: web::Memory,
}

impl WebReport {
    pub fn table(&self) -> String {
        let mut t = String::new();
        let _ = writeln!(
            t,
            "stead {} ({})
",
            self.stead_version, self.stead
        );
        let head = |t: &mut String, title: &str, last: &str| {
            let _ = writeln!(
                t,
                "{title:<56} {:>5} {:>9} {:>9} {:>9}",
                "n", "median", "p90", last
            );
        };
        let row = |t: &mut String, name: &str, s: &Stats, last: f64| {
            let _ = writeln!(
                t,
                "{name:<56} {:>5} {:>9.2} {:>9.2} {last:>9.2}",
                s.n, s.median, s.p90
            );
        };

        head(&mut t, "run end -> seen (ms, `true` run by POST)", "max");
        row(
            &mut t,
            "run end -> event stream (SSE `run` event)",
            &self.stream,
            self.stream.max,
        );
        let name = "run end -> dashboard (real browser)";
        match &self.browser {
            Browser::Measured(s) => {
                row(&mut t, name, s, s.max);
                let _ = writeln!(
                    t,
                    "  target: dashboard shows the end < {BROWSER_TARGET_MS:.0} ms after it (p90): {}",
                    verdict(s.p90 < BROWSER_TARGET_MS)
                );
            }
            Browser::Skipped(reason) => {
                let _ = writeln!(t, "{name:<56} skipped: {reason}");
                let _ = writeln!(t, "  target: < {BROWSER_TARGET_MS:.0} ms: not measured");
            }
        }

        let q = &self.listing;
        let _ = writeln!(t);
        head(
            &mut t,
            &format!("{} runs in the ledger (ms)", q.rows),
            "min",
        );
        let [newest, no_match] = web::listing_paths();
        row(
            &mut t,
            &format!("GET {newest} (kept-alive)"),
            &q.newest,
            q.newest.min,
        );
        row(
            &mut t,
            &format!("GET {no_match}"),
            &q.no_match,
            q.no_match.min,
        );
        row(
            &mut t,
            &format!("stead {} (whole process)", LISTINGS[0].join(" ")),
            &q.cli,
            q.cli.min,
        );

        let m = &self.memory;
        let _ = writeln!(
            t,
            "
{:<56} {:>7} {:>7} {:>7} {:>7}",
            "server memory (MiB)", "VmRSS", "VmHWM", "Pss", "sockets"
        );
        for s in &m.stages {
            let _ = writeln!(
                t,
                "{:<56} {:>7.1} {:>7.1} {:>7.1} {:>7}",
                s.name, s.rss, s.hwm, s.pss, s.sockets
            );
        }
        match &m.browser {
            Browser::Measured(runs) => {
                let _ = writeln!(
                    t,
                    "  the dashboard was live to the end and listed {runs} runs"
                );
            }
            Browser::Skipped(reason) => {
                let _ = writeln!(t, "  no browser: {reason}");
            }
        }

        let _ = writeln!(t, "\nnotes:");
        for note in WEB_NOTES {
            let _ = writeln!(t, "- {note}");
        }
        t
    }

    pub fn json(&self) -> Value {
        let with_max = |s: &Stats| {
            let mut v = stats(s);
            v["max"] = json!(s.max);
            v
        };
        let (browser, skipped) = match &self.browser {
            Browser::Measured(s) => (Some(with_max(s)), None),
            Browser::Skipped(reason) => (None, Some(reason)),
        };
        let target_met = match &self.browser {
            Browser::Measured(s) => Some(s.p90 < BROWSER_TARGET_MS),
            Browser::Skipped(_) => None,
        };
        let q = &self.listing;
        let m = &self.memory;
        let stages: Vec<Value> = m
            .stages
            .iter()
            .map(|s| {
                json!({
                    "stage": s.name,
                    "rss": s.rss,
                    "hwm": s.hwm,
                    "pss": s.pss,
                    "sockets": s.sockets,
                })
            })
            .collect();
        let (page_runs, no_browser) = match &m.browser {
            Browser::Measured(runs) => (Some(*runs), None),
            Browser::Skipped(reason) => (None, Some(reason)),
        };
        let [newest, no_match] = web::listing_paths();
        json!({
            "stead": { "path": self.stead, "version": self.stead_version },
            "run_end_to_event_stream_ms": with_max(&self.stream),
            "run_end_to_dashboard_ms": {
                "browser": browser,
                "skipped": skipped,
                "target_ms": BROWSER_TARGET_MS,
                "target_met_p90": target_met,
            },
            "api_runs_ms": {
                "ledger_rows": q.rows,
                "requests": { newest: stats(&q.newest), no_match: stats(&q.no_match) },
                "cli_runs_limit_50": stats(&q.cli),
            },
            "server_memory_mib": {
                "sse_clients": MEMORY_CLIENTS,
                "runs_streamed": MEMORY_RUNS,
                "dashboard_runs_listed": page_runs,
                "no_browser": no_browser,
                "stages": stages,
            },
            "notes": WEB_NOTES,
        })
    }
}

fn verdict(met: bool) -> &'static str {
    if met { "met" } else { "MISSED" }
}

const WEB_NOTES: [&str; 5] = [
    "a run's end is its ended_at in the ledger (whole milliseconds, written by its monitor \
     before the fsync of that transition); the event stream's time is when the bench's \
     reader thread parsed the event, the dashboard's when a MutationObserver in the page \
     first saw the run's row with data-status=succeeded (Date.now(), before paint); all \
     on this machine's wall clock.",
    "runs are started one after another, each once the last one's end was seen; the \
     event stream is read over one kept-open connection, which subscribes before its \
     hello event.",
    "the browser is Debian's chromium, headless, driven by playwright-core from \
     web-tests/latency.mjs; its runs go through node's fetch.",
    "the ledger is filled directly with SQLite while the server is stopped; `status=failed` \
     matches none of its runs; requests go over one kept-alive ureq connection, and each \
     series begins with 5 untimed calls.",
    "memory: VmRSS/VmHWM once VmRSS is unchanged for 1 s, then Pss from smaps_rollup; \
     sockets are the server's open socket descriptors (its listeners and connections).",
];

/// The cluster figures: one host on PostgreSQL beside SQLite, then three hosts.
pub struct ClusterReport {
    pub stead: String,
    pub stead_version: String,
    /// PostgreSQL's `server_version`.
    pub postgres_version: String,
    pub fires: usize,
    /// SQLite, then PostgreSQL.
    pub latency: [Latency; 2],
    pub throughput: [Throughput; 2],
    /// 100 runs in flight on one host: SQLite, then PostgreSQL.
    pub wide: [crate::wide::Wide; 2],
    pub failover: Failover,
    pub death: Death,
}

/// The column titles of the two backends.
const BACKENDS: [&str; 2] = ["SQLite", "PostgreSQL"];

impl ClusterReport {
    pub fn table(&self) -> String {
        let mut t = String::new();
        let _ = writeln!(
            t,
            "stead {} ({}), PostgreSQL {}\n",
            self.stead_version, self.stead, self.postgres_version
        );

        let pair = |t: &mut String, name: &str, [a, b]: [String; 2]| {
            let _ = writeln!(t, "{name:<52} {a:>20} {b:>20}");
        };
        let [sqlite, postgres] = BACKENDS.map(String::from);
        pair(
            &mut t,
            &format!(
                "one host, fire-to-exec, every 1s, {} fires (ms)",
                self.fires
            ),
            [
                format!("{sqlite} med / p90"),
                format!("{postgres} med / p90"),
            ],
        );
        let [ls, lp] = &self.latency;
        let mp = |s: &Stats| format!("{:.2} / {:.2}", s.median, s.p90);
        pair(
            &mut t,
            "scheduled -> run row written (ms steps)",
            [mp(&ls.created), mp(&lp.created)],
        );
        pair(
            &mut t,
            "scheduled -> monitor marks running (ms steps)",
            [mp(&ls.running), mp(&lp.running)],
        );
        pair(
            &mut t,
            "scheduled -> probe process starts",
            [mp(&ls.exec), mp(&lp.exec)],
        );

        let [ts, tp] = &self.throughput;
        let _ = writeln!(t);
        pair(
            &mut t,
            &format!("one host, {} on-demand runs of `true`", ts.runs),
            [sqlite.clone(), postgres.clone()],
        );
        let mut line = |name: &str, f: &dyn Fn(&Throughput) -> String| {
            pair(&mut t, name, [f(ts), f(tp)]);
        };
        line("submitted, one client process each (s)", &|x| {
            format!("{:.2}", x.submit.as_secs_f64())
        });
        line("until every run ended (s)", &|x| {
            format!("{:.2}", x.total.as_secs_f64())
        });
        line("runs/s", &|x| format!("{:.0}", x.per_second()));
        line("client process median / p90 (ms)", &|x| {
            format!("{:.2} / {:.2}", x.per_call.median, x.per_call.p90)
        });
        line("succeeded", &|x| format!("{}/{}", x.succeeded, x.runs));

        let [ws, wp] = &self.wide;
        let _ = writeln!(t);
        pair(
            &mut t,
            &format!("one host, {} runs in flight at once", ws.runs),
            [sqlite, postgres],
        );
        pair(
            &mut t,
            "held of the ledger at most (SQLite: processes with the file open; PostgreSQL: connections)",
            [ws.peak_held.to_string(), wp.peak_held.to_string()],
        );
        pair(
            &mut t,
            "first `stead run` -> all running (ms)",
            [
                format!("{:.0}", ws.all_running_ms),
                format!("{:.0}", wp.all_running_ms),
            ],
        );

        let _ = writeln!(
            t,
            "\n{} hosts on one PostgreSQL ledger: lease {LEASE_MS} ms, heartbeat {HEARTBEAT_MS} ms, \
             resume delay {CLUSTER_RESUME_DELAY_MS} ms",
            HOSTS.len()
        );
        let head = |t: &mut String, title: &str| {
            let _ = writeln!(
                t,
                "{title:<52} {:>5} {:>9} {:>9} {:>9}",
                "n", "median", "p90", "max"
            );
        };
        let row = |t: &mut String, name: &str, s: &Stats| {
            let _ = writeln!(
                t,
                "{name:<52} {:>5} {:>9.2} {:>9.2} {:>9.2}",
                s.n, s.median, s.p90, s.max
            );
        };
        let leases = |s: &Stats| Stats {
            median: s.median / LEASE_MS as f64,
            p90: s.p90 / LEASE_MS as f64,
            min: s.min / LEASE_MS as f64,
            max: s.max / LEASE_MS as f64,
            ..*s
        };

        let f = &self.failover;
        head(&mut t, "leader failover after SIGKILL (ms)");
        row(
            &mut t,
            "SIGKILL leader -> another host named leader",
            &f.handover,
        );
        row(
            &mut t,
            &format!("  the same in leases ({LEASE_MS} ms)"),
            &leases(&f.handover),
        );
        row(
            &mut t,
            "  SIGKILL -> dead leader's row expired (ledger ms)",
            &f.expiry,
        );
        row(
            &mut t,
            "restart of the killed host -> all serving again",
            &f.rejoin,
        );
        let _ = writeln!(t, "  each: {}", repetitions(&f.each, false));

        let d = &self.death;
        let _ = writeln!(t);
        head(&mut t, "host death -> its run resumed on another host (ms)");
        row(
            &mut t,
            "SIGKILL host -> resume run running elsewhere",
            &d.resumed,
        );
        row(
            &mut t,
            &format!("  the same in leases ({LEASE_MS} ms)"),
            &leases(&d.resumed),
        );
        row(
            &mut t,
            "  SIGKILL -> run ended interrupted (ledger ms)",
            &d.interrupted,
        );
        row(
            &mut t,
            "  SIGKILL -> resume run's row written (ledger ms)",
            &d.row,
        );
        row(
            &mut t,
            "  SIGKILL -> resume run marked running (ledger ms)",
            &d.running,
        );
        row(
            &mut t,
            "restart of the dead host -> all serving again",
            &d.rejoin,
        );
        let _ = writeln!(t, "  each: {}", repetitions(&d.each, true));
        let floor = LEASE_MS + CLUSTER_RESUME_DELAY_MS;
        let _ = writeln!(
            t,
            "  floor: one lease ({LEASE_MS} ms: the host must be silent a whole lease) + the \
             resume delay ({CLUSTER_RESUME_DELAY_MS} ms) = {floor} ms after the host's last \
             heartbeat,\n  which came up to a heartbeat before the kill: {} to {floor} ms \
             after the kill",
            floor - HEARTBEAT_MS
        );

        let _ = writeln!(t, "\nnotes:");
        for note in CLUSTER_NOTES {
            let _ = writeln!(t, "- {note}");
        }
        t
    }

    pub fn json(&self) -> Value {
        let latency = |l: &Latency| {
            json!({
                "scheduled_to_row_written": stats(&l.created),
                "scheduled_to_running": stats(&l.running),
                "scheduled_to_probe_start": stats(&l.exec),
            })
        };
        let throughput = |x: &Throughput| {
            json!({
                "runs": x.runs,
                "submit_s": x.submit.as_secs_f64(),
                "total_s": x.total.as_secs_f64(),
                "runs_per_s": x.per_second(),
                "client_process_ms": stats(&x.per_call),
                "succeeded": x.succeeded,
            })
        };
        let with_max = |s: &Stats| {
            let mut v = stats(s);
            v["max"] = json!(s.max);
            v
        };
        let each = |reps: &[Repetition]| {
            reps.iter()
                .map(|r| {
                    json!({
                        "ms": r.ms,
                        "from": r.from,
                        "to": r.to,
                        "leader": r.leader,
                        "ledger_ms": r.ledger_ms,
                    })
                })
                .collect::<Vec<_>>()
        };
        let in_leases = |s: &Stats| json!({ "median": s.median / LEASE_MS as f64, "max": s.max / LEASE_MS as f64 });
        let f = &self.failover;
        let d = &self.death;
        json!({
            "stead": { "path": self.stead, "version": self.stead_version },
            "postgres": { "version": self.postgres_version },
            "fire_to_exec_ms": {
                "fires": self.fires,
                "sqlite": latency(&self.latency[0]),
                "postgres": latency(&self.latency[1]),
            },
            "throughput": {
                "sqlite": throughput(&self.throughput[0]),
                "postgres": throughput(&self.throughput[1]),
            },
            "in_flight": {
                "sqlite": self.wide[0].json(),
                "postgres": self.wide[1].json(),
            },
            "cluster": {
                "hosts": HOSTS.len(),
                "lease_ms": LEASE_MS,
                "heartbeat_ms": HEARTBEAT_MS,
                "resume_delay_ms": CLUSTER_RESUME_DELAY_MS,
                "poll_ms": POLL_MS,
            },
            "leader_failover_ms": {
                "sigkill_to_new_leader": with_max(&f.handover),
                "in_leases": in_leases(&f.handover),
                "ledger_sigkill_to_leadership_expiry": with_max(&f.expiry),
                "restart_to_all_serving": with_max(&f.rejoin),
                "each": each(&f.each),
            },
            "host_death_ms": {
                "sigkill_to_resume_running": with_max(&d.resumed),
                "in_leases": in_leases(&d.resumed),
                "ledger_sigkill_to_interrupted": with_max(&d.interrupted),
                "ledger_sigkill_to_resume_row": with_max(&d.row),
                "ledger_sigkill_to_resume_running": with_max(&d.running),
                "restart_to_all_serving": with_max(&d.rejoin),
                "floor_ms_after_last_heartbeat": LEASE_MS + CLUSTER_RESUME_DELAY_MS,
                "each": each(&d.each),
            },
            "notes": CLUSTER_NOTES,
        })
    }
}

/// `2034 (a->b, leader), 2101 (c->a), ...`: each repetition's time, killed host, the
/// host that took over, and (with `mark_leader`) whether the killed host led.
fn repetitions(reps: &[Repetition], mark_leader: bool) -> String {
    reps.iter()
        .map(|r| {
            let leader = if mark_leader && r.leader {
                ", leader"
            } else {
                ""
            };
            format!("{:.0} ({}->{}{leader})", r.ms, r.from, r.to)
        })
        .collect::<Vec<_>>()
        .join(", ")
}

const CLUSTER_NOTES: [&str; 7] = [
    "every PostgreSQL ledger is a database of the bench's own, created through \
     STEAD_TEST_PG_URL and dropped at the end; the one-host figures are the `runs` figures' \
     code on each backend in turn, PostgreSQL's one-host servers with default timings; on \
     PostgreSQL a fire or a `stead run` is queued for any host and claimed after a \
     NOTIFY, even with one host.",
    "the three hosts are three servers on this machine, each with its own state \
     directory, STEAD_MACHINE_ID and STEAD_HOST_NAME, all with STEAD_LEASE_MS=2000, \
     STEAD_HEARTBEAT_MS=250 and STEAD_RESUME_DELAY_MS=200, on one local PostgreSQL.",
    "failover is timed from just before kill(1) sends SIGKILL to the leader's server \
     until `stead hosts --json` on another host names another leader, asked every 10 ms \
     after the last answer; the leader row expires one lease after its last renewal (at \
     most a heartbeat before the kill) and the others campaign every heartbeat, so about \
     one lease, give or take a heartbeat.",
    "host death: SIGKILL of the host's server, then of its run's monitor and command (the \
     monitor's children) once the server is gone; the command is `stead-bench hold DIR`, \
     a sleep whose argv names the bench's directory so the cleanup finds it; the resume \
     run is looked for in the ledger every 10 ms; the leader interrupts the run once the \
     host's last heartbeat is a lease old (it looks every heartbeat), its resume pass \
     waits the resume delay, then a host claims the queued resume run.",
    "before every kill and every restart the bench waits a pseudo-random time under one \
     heartbeat, so the kills fall anywhere in the victim's heartbeat and the hosts' \
     heartbeats do not stay in step (the bench's own chain of calls would otherwise kill \
     each new leader about 50 ms after one of its renewals, and restart a server a fixed \
     few tens of ms after the new leader's tick).",
    "ledger steps are whole milliseconds on this machine's clock, from the bench's wall \
     clock at the kill; `each` lists every repetition: killed host -> host that led next \
     or ran the resume, `leader` when the dead host led the scheduler (the JSON adds each \
     one's ledger steps: leadership expired; or run interrupted, resume row written, \
     resume running).",
    "after each repetition the killed server is started again with `stead status` and \
     the bench waits until `stead hosts --json` shows all three serving, the restarted \
     host with its new server's pid; each resume run is then cancelled.",
];

pub fn stats(s: &Stats) -> Value {
    json!({ "n": s.n, "median": s.median, "p90": s.p90, "min": s.min })
}
