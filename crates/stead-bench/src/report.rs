//! The figures as a table for people and as a JSON object for scripts.

use std::fmt::Write;

use serde_json::{Value, json};

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

fn stats(s: &Stats) -> Value {
    json!({ "n": s.n, "median": s.median, "p90": s.p90, "min": s.min })
}
