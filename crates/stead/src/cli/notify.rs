//! `stead notify add|ls|rm|test`: where events about runs are POSTed (a failure that no
//! retry follows, a cut run that will not be resumed, and more on request).

use std::fmt::Write as _;
use std::path::Path;

use clap::{Subcommand, ValueEnum};
use jiff::tz::TimeZone;
use stead_client::Client;
use stead_protocol::{
    Empty, Notifier, NotifierName, NotifierSpec, NotifyEvent, NotifyTestResult, exit, method,
};

use super::output::{self, OutputArgs, Show};
use super::render::{self, NONE};

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    command: NotifyCommand,
}

#[derive(Debug, Subcommand)]
enum NotifyCommand {
    /// Add a notifier (or replace the one of that name): each event is POSTed to its URL
    /// as JSON, retried with backoff until the receiver answers 2xx
    Add(AddArgs),
    /// List the notifiers and how their deliveries stand
    Ls(OutputArgs),
    /// Remove a notifier and the events not yet delivered to it
    Rm(NameArgs),
    /// POST a test event to a notifier now and say what it answered (exit 1 if not 2xx)
    Test(NameArgs),
}

#[derive(Debug, clap::Args)]
struct AddArgs {
    /// The notifier's name
    name: String,
    /// Where events are POSTed (http:// or https://)
    #[arg(long, value_name = "URL")]
    url: String,
    /// An event to send; repeat for more [default: failed, not_resumed, overdue]
    #[arg(long = "event", value_name = "EVENT")]
    events: Vec<EventArg>,
    /// Only events of this job; repeat for more [default: every job]
    #[arg(long = "job", value_name = "JOB")]
    jobs: Vec<String>,
    /// Sign each POST with HMAC-SHA256 (header X-Stead-Signature) under a secret kept in
    /// the state directory
    #[arg(long)]
    sign: bool,
    #[command(flatten)]
    format: OutputArgs,
}

/// `--event` values: the events a notifier may ask for, by their wire names.
#[derive(Debug, Clone, Copy, ValueEnum)]
#[value(rename_all = "snake_case")]
enum EventArg {
    /// The last attempt of a genuine failure (no retry follows)
    Failed,
    /// A cut run that will not be resumed (too old, its job gone or disabled)
    NotResumed,
    /// Fires not run: missed outside the catch-up window, or under catch_up = skip
    Missed,
    /// A job's first success after a failure, or the success ending an overdue lapse
    Recovered,
    /// A run was cut (it is owed and resumed unless something says otherwise)
    Interrupted,
    /// A job with expect_within has had no success for that long (once per lapse)
    Overdue,
}

impl From<EventArg> for NotifyEvent {
    fn from(e: EventArg) -> Self {
        match e {
            EventArg::Failed => NotifyEvent::Failed,
            EventArg::NotResumed => NotifyEvent::NotResumed,
            EventArg::Missed => NotifyEvent::Missed,
            EventArg::Recovered => NotifyEvent::Recovered,
            EventArg::Interrupted => NotifyEvent::Interrupted,
            EventArg::Overdue => NotifyEvent::Overdue,
        }
    }
}

#[derive(Debug, clap::Args)]
struct NameArgs {
    /// The notifier's name
    name: String,
    #[command(flatten)]
    format: OutputArgs,
}

pub fn run(dir: Option<&Path>, args: Args) -> anyhow::Result<i32> {
    let mut conn = super::connect(&Client::for_state_dir(dir)?)?;
    match args.command {
        NotifyCommand::Add(add) => {
            let notifier = conn.call::<method::NotifyAdd>(&NotifierSpec {
                name: add.name,
                url: add.url,
                events: add.events.into_iter().map(NotifyEvent::from).collect(),
                jobs: add.jobs,
                sign: add.sign,
            })?;
            output::show_with(&notifier, add.format, || added(&notifier))?;
        }
        NotifyCommand::Ls(format) => {
            output::show(&conn.call::<method::NotifyList>(&Empty {})?, format)?;
        }
        NotifyCommand::Rm(rm) => {
            let notifier = conn.call::<method::NotifyRemove>(&NotifierName { name: rm.name })?;
            output::show_with(&notifier, rm.format, || {
                format!("removed notifier {}\n", notifier.spec.name)
            })?;
        }
        NotifyCommand::Test(test) => {
            let result = conn.call::<method::NotifyTest>(&NotifierName { name: test.name })?;
            output::show(&result, test.format)?;
            if !result.delivered {
                return Ok(exit::FAILURE);
            }
        }
    }
    Ok(exit::SUCCESS)
}

fn events(notifier: &Notifier) -> String {
    notifier
        .delivers
        .iter()
        .map(|e| e.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

fn added(notifier: &Notifier) -> String {
    let mut out = format!(
        "added notifier {}: {} to {}\n",
        notifier.spec.name,
        events(notifier),
        notifier.spec.url
    );
    if let Some(file) = &notifier.secret_file {
        let _ = writeln!(
            out,
            "  signed: X-Stead-Signature: sha256=HMAC-SHA256(secret, body), secret in {file}"
        );
    }
    out
}

impl Show for NotifyTestResult {
    fn human(&self) -> String {
        match (&self.status, &self.error) {
            (Some(status), _) if self.delivered => format!(
                "delivered a test event to {} ({}): it answered {status}\n",
                self.name, self.url
            ),
            (_, Some(why)) => format!("not delivered to {}: {why}\n", self.name),
            _ => format!("not delivered to {}\n", self.name),
        }
    }
}

impl Show for Vec<Notifier> {
    fn human(&self) -> String {
        render_list(self, &TimeZone::system())
    }
}

/// The `stead notify ls` table, times in zone `tz`.
fn render_list(notifiers: &[Notifier], tz: &TimeZone) -> String {
    if notifiers.is_empty() {
        return "no notifiers; add one with `stead notify add NAME --url URL`\n".to_string();
    }
    let rows = notifiers.iter().map(|n| {
        vec![
            n.spec.name.clone(),
            n.spec.url.clone(),
            events(n),
            if n.spec.jobs.is_empty() {
                "all".to_string()
            } else {
                n.spec.jobs.join(", ")
            },
            n.pending.to_string(),
            n.delivered.to_string(),
            n.last_delivered_at
                .as_deref()
                .map_or_else(|| NONE.to_string(), |t| render::when_in(t, tz)),
            render::truncate(n.last_error.as_deref().unwrap_or(NONE), 60),
        ]
    });
    render::table(
        &[
            "NAME",
            "URL",
            "EVENTS",
            "JOBS",
            "PENDING",
            "DELIVERED",
            "LAST DELIVERED",
            "LAST ERROR",
        ],
        rows,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn notifier(events: Vec<NotifyEvent>) -> Notifier {
        let delivers = if events.is_empty() {
            NotifyEvent::DEFAULT.to_vec()
        } else {
            events.clone()
        };
        Notifier {
            spec: NotifierSpec {
                name: "ops".into(),
                url: "http://127.0.0.1:9000/hook".into(),
                events,
                jobs: Vec::new(),
                sign: false,
            },
            delivers,
            secret_file: None,
            pending: 2,
            delivered: 7,
            last_delivered_at: Some("2026-12-02T06:00:00.120Z".into()),
            last_error: Some("http://127.0.0.1:9000/hook: connection refused".into()),
        }
    }

    #[test]
    fn the_table_says_what_each_notifier_gets_and_how_its_deliveries_stand() {
        let out = render_list(&[notifier(Vec::new())], &TimeZone::UTC);
        let lines: Vec<&str> = out.lines().collect();
        assert!(lines[0].starts_with("NAME  URL"), "{out}");
        assert!(lines[1].contains("failed, not_resumed"), "{out}");
        assert!(lines[1].contains(" all "), "{out}");
        assert!(lines[1].contains("2026-12-02 06:00:00 UTC"), "{out}");
        assert!(lines[1].ends_with("connection refused"), "{out}");
        assert_eq!(render_list(&[], &TimeZone::UTC).lines().count(), 1);
    }

    #[test]
    fn a_test_says_what_the_receiver_answered() {
        let mut result = NotifyTestResult {
            name: "ops".into(),
            url: "http://x/".into(),
            status: Some(204),
            delivered: true,
            error: None,
        };
        assert_eq!(
            result.human(),
            "delivered a test event to ops (http://x/): it answered 204\n"
        );
        result.delivered = false;
        result.status = None;
        result.error = Some("http://x/ answered 500".into());
        assert_eq!(
            result.human(),
            "not delivered to ops: http://x/ answered 500\n"
        );
    }

    #[test]
    fn event_names_on_the_command_line_are_the_wire_names() {
        for (arg, event) in [
            (EventArg::Failed, "failed"),
            (EventArg::NotResumed, "not_resumed"),
            (EventArg::Missed, "missed"),
            (EventArg::Recovered, "recovered"),
            (EventArg::Interrupted, "interrupted"),
        ] {
            let value = arg.to_possible_value().unwrap();
            assert_eq!(value.get_name(), event);
            assert_eq!(NotifyEvent::from(arg).as_str(), event);
        }
    }
}
