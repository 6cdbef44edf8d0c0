//! `stead apply FILE.toml`: make the server's jobs match a file of `[[job]]` tables (and
//! its services, queues and notifiers match the file's `[[service]]`, `[[queue]]` and
//! `[[notify]]` tables).
//!
//! The file is parsed and checked here before anything is sent, so a typo is reported
//! with toml's line and column and the server never sees half a file. The server then
//! validates each job (schedule, zone, durations) and computes the plan.

use std::fmt::Write as _;
use std::path::Path;

use serde::Deserialize;
use stead_client::Client;
use stead_protocol::{
    ApplyParams, ApplyResult, JobSpec, NameChanges, NotifierSpec, QueueSpec, ServiceSpec, exit,
};

use super::errors::DataError;
use super::output::{self, OutputArgs, Show};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The job file: `[[job]]` tables, one per job (see examples/jobs.toml)
    #[arg(value_name = "FILE.toml")]
    file: std::path::PathBuf,
    /// Say what would change, change nothing
    #[arg(long)]
    dry_run: bool,
    /// Also remove the jobs, services, queues and notifiers that are not in the file
    #[arg(long)]
    prune: bool,
    #[command(flatten)]
    format: OutputArgs,
}

/// The file's shape: only `[[job]]`, `[[service]]`, `[[queue]]` and `[[notify]]` tables,
/// so a misspelt `[[jobs]]` is an error rather than an empty file (which, with `--prune`,
/// would remove every job).
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct JobFile {
    #[serde(default)]
    job: Vec<JobSpec>,
    #[serde(default)]
    service: Vec<ServiceSpec>,
    #[serde(default)]
    queue: Vec<QueueSpec>,
    #[serde(default)]
    notify: Vec<NotifierSpec>,
}

pub fn run(dir: Option<&Path>, args: Args) -> anyhow::Result<i32> {
    let text = std::fs::read_to_string(&args.file)
        .map_err(|e| DataError(format!("cannot read {}: {e}", args.file.display())))?;
    let file = parse(&args.file, &text)?;
    let client = Client::for_state_dir(dir)?;
    let result = super::connect(&client)?.apply(ApplyParams {
        jobs: file.job,
        services: file.service,
        queues: file.queue,
        notifiers: file.notify,
        prune: args.prune,
        dry_run: args.dry_run,
    })?;
    output::show(&result, args.format)?;
    Ok(exit::SUCCESS)
}

/// The tables of a job file, or why the file is refused (its path first).
fn parse(path: &Path, text: &str) -> Result<JobFile, DataError> {
    let file: JobFile = toml::from_str(text)
        .map_err(|e| DataError(format!("{}: {}", path.display(), e.to_string().trim_end())))?;
    for (i, job) in file.job.iter().enumerate() {
        if let Some(j) = file.job[..i].iter().position(|o| o.name == job.name) {
            return Err(DataError(format!(
                "{}: job {:?} is declared twice ([[job]] tables {} and {})",
                path.display(),
                job.name,
                j + 1,
                i + 1
            )));
        }
    }
    Ok(file)
}

impl Show for ApplyResult {
    fn human(&self) -> String {
        let (created, changed, removed) = if self.dry_run {
            ("would create", "would change", "would remove")
        } else {
            ("created", "changed", "removed")
        };
        let mut out = String::new();
        for name in &self.created {
            let _ = writeln!(out, "+ {created} {name}");
        }
        for change in &self.changed {
            let _ = writeln!(
                out,
                "~ {changed} {} ({})",
                change.name,
                change.fields.join(", ")
            );
        }
        for name in &self.removed {
            let _ = writeln!(out, "- {removed} {name}");
        }
        let kinds: [(&str, &NameChanges); 3] = [
            ("service", &self.services),
            ("queue", &self.queues),
            ("notifier", &self.notifiers),
        ];
        for (kind, names) in kinds {
            for name in &names.created {
                let _ = writeln!(out, "+ {created} {kind} {name}");
            }
            for name in &names.changed {
                let _ = writeln!(out, "~ {changed} {kind} {name}");
            }
            for name in &names.removed {
                let _ = writeln!(out, "- {removed} {kind} {name}");
            }
        }
        let (c, h, r, u) = (
            self.created.len(),
            self.changed.len(),
            self.removed.len(),
            self.unchanged.len(),
        );
        if self.dry_run {
            let _ = writeln!(
                out,
                "dry run: would create {c}, change {h}, remove {r}; {u} unchanged"
            );
        } else {
            let _ = writeln!(out, "{c} created, {h} changed, {r} removed, {u} unchanged");
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use stead_protocol::{Concurrency, JobChange};

    use super::*;

    fn parse_str(text: &str) -> Result<Vec<JobSpec>, String> {
        parse(Path::new("jobs.toml"), text)
            .map(|file| file.job)
            .map_err(|e| e.0)
    }

    #[test]
    fn a_good_file_parses_into_specs() {
        let jobs = parse_str(
            r#"
            [[job]]
            name = "heartbeat"
            every = "1m"
            command = ["date", "-u"]

            [[job]]
            name = "journal"
            cron = "0 20 * * *"
            tz = "Europe/Berlin"
            shell = true
            command = ["echo dear diary"]
            cwd = "/tmp"
            env = { LANG = "C" }
            timeout = "5m"
            concurrency = "allow"
            enabled = false
            "#,
        )
        .unwrap();
        assert_eq!(jobs.len(), 2);
        assert_eq!(jobs[0].name, "heartbeat");
        assert_eq!(jobs[0].every.as_deref(), Some("1m"));
        assert_eq!(jobs[0].command, ["date", "-u"]);
        assert!(jobs[0].enabled);
        assert_eq!(jobs[0].concurrency, Concurrency::Forbid);
        let journal = &jobs[1];
        assert_eq!(journal.cron.as_deref(), Some("0 20 * * *"));
        assert_eq!(journal.tz.as_deref(), Some("Europe/Berlin"));
        assert!(journal.shell);
        assert_eq!(journal.cwd.as_deref(), Some("/tmp"));
        assert_eq!(
            journal.env,
            BTreeMap::from([("LANG".to_string(), "C".to_string())])
        );
        assert_eq!(journal.timeout.as_deref(), Some("5m"));
        assert_eq!(journal.concurrency, Concurrency::Allow);
        assert!(!journal.enabled);
    }

    #[test]
    fn an_empty_file_has_no_jobs() {
        assert_eq!(parse_str("").unwrap(), []);
    }

    #[test]
    fn the_shipped_example_parses() {
        let text = include_str!("../../../../examples/jobs.toml");
        let jobs = parse_str(text).unwrap();
        let names: Vec<&str> = jobs.iter().map(|j| j.name.as_str()).collect();
        assert_eq!(names, ["heartbeat", "journal", "hello"]);
    }

    #[test]
    fn an_unknown_key_names_the_file_line_and_key() {
        let err = parse_str(
            "[[job]]\nname = \"a\"\ncommand = [\"true\"]\n\n[[job]]\nname = \"b\"\ncomand = [\"true\"]\n",
        )
        .unwrap_err();
        assert!(err.starts_with("jobs.toml: "), "{err}");
        assert!(err.contains("line 7"), "{err}");
        assert!(err.contains("comand"), "{err}");
    }

    #[test]
    fn an_unknown_table_is_refused() {
        let err = parse_str("[[jobs]]\nname = \"a\"\ncommand = [\"true\"]\n").unwrap_err();
        assert!(err.contains("line 1"), "{err}");
        assert!(err.contains("jobs"), "{err}");
    }

    #[test]
    fn a_missing_field_and_a_wrong_type_are_refused() {
        let err = parse_str("[[job]]\nname = \"a\"\n").unwrap_err();
        assert!(err.contains("command"), "{err}");
        let err = parse_str("[[job]]\nname = \"a\"\ncommand = \"true\"\n").unwrap_err();
        assert!(err.contains("line 3"), "{err}");
    }

    #[test]
    fn duplicate_names_are_refused_by_name() {
        let err = parse_str(
            "[[job]]\nname = \"a\"\ncommand = [\"true\"]\n\
             [[job]]\nname = \"b\"\ncommand = [\"true\"]\n\
             [[job]]\nname = \"a\"\ncommand = [\"false\"]\n",
        )
        .unwrap_err();
        assert_eq!(
            err,
            "jobs.toml: job \"a\" is declared twice ([[job]] tables 1 and 3)"
        );
    }

    fn result(dry_run: bool) -> ApplyResult {
        ApplyResult {
            created: vec!["new".into()],
            changed: vec![JobChange {
                name: "edited".into(),
                fields: vec!["cron".into(), "tz".into()],
            }],
            removed: vec!["old".into()],
            unchanged: vec!["same".into(), "same2".into()],
            dry_run,
            ..ApplyResult::default()
        }
    }

    #[test]
    fn queues_and_notifiers_come_from_their_own_tables() {
        let file = parse(
            Path::new("jobs.toml"),
            r#"
            [[queue]]
            name = "gpu"
            parallel = 2

            [[notify]]
            name = "ops"
            url = "https://ntfy.example/stead"
            events = ["failed", "missed"]
            sign = true

            [[job]]
            name = "train"
            queue = "gpu"
            retries = 3
            retry_delay = "10s"
            after = ["fetch"]
            command = ["train.sh"]
            "#,
        )
        .unwrap();
        assert_eq!(
            file.queue,
            [QueueSpec {
                name: "gpu".into(),
                parallel: 2
            }]
        );
        assert_eq!(file.notify[0].name, "ops");
        assert_eq!(
            file.notify[0].events,
            [
                stead_protocol::NotifyEvent::Failed,
                stead_protocol::NotifyEvent::Missed
            ]
        );
        assert!(file.notify[0].sign);
        assert_eq!(file.job[0].queue.as_deref(), Some("gpu"));
        assert_eq!(file.job[0].retries, 3);
        assert_eq!(file.job[0].after, ["fetch"]);
        let err = parse_str("[[notify]]\nname = \"x\"\nurl = \"http://h/\"\nevents = [\"boom\"]\n")
            .unwrap_err();
        assert!(err.contains("boom"), "{err}");
    }

    #[test]
    fn what_happened_to_queues_and_notifiers_has_a_line_each() {
        let mut result = ApplyResult::default();
        result.queues.created.push("gpu".into());
        result.notifiers.removed.push("old-hook".into());
        assert_eq!(
            result.human(),
            "+ created queue gpu\n- removed notifier old-hook\n\
             0 created, 0 changed, 0 removed, 0 unchanged\n"
        );
    }

    #[test]
    fn the_plan_reads_line_by_line() {
        assert_eq!(
            result(false).human(),
            "+ created new\n~ changed edited (cron, tz)\n- removed old\n\
             1 created, 1 changed, 1 removed, 2 unchanged\n"
        );
        assert_eq!(
            result(true).human(),
            "+ would create new\n~ would change edited (cron, tz)\n- would remove old\n\
             dry run: would create 1, change 1, remove 1; 2 unchanged\n"
        );
        assert_eq!(
            ApplyResult::default().human(),
            "0 created, 0 changed, 0 removed, 0 unchanged\n"
        );
    }
}
