//! The guard's tests: the table of commands by class (`table`), what a refusal says
//! (`refusals`), the limits (`limits`), and properties over generated commands
//! (`props`).

mod limits;
mod props;
mod refusals;
mod table;

use std::path::PathBuf;

use stead_protocol::ServiceSpec;

use super::{Guard, Protected, Refusal, Verdict};

/// The guard's own state directory in these tests.
const OWN: &str = "/srv/stead";

/// `web` declares every form; `db` is reached through its restart string and process.
fn services() -> Vec<ServiceSpec> {
    vec![
        ServiceSpec {
            name: "web".into(),
            restart: Some("systemctl --user restart web.service".into()),
            systemd_unit: Some("web.service".into()),
            launchd_label: Some("com.example.web".into()),
            process: Some("web-server".into()),
            ..ServiceSpec::default()
        },
        ServiceSpec {
            name: "db".into(),
            restart: Some("cd /srv/db && ./bin/restart-db --graceful".into()),
            launchd_label: Some("org.example.db".into()),
            process: Some("postgres".into()),
            ..ServiceSpec::default()
        },
    ]
}

fn guard() -> Guard {
    Guard::new(&services()).protecting(Protected {
        state_dir: Some(PathBuf::from(OWN)),
        default_state_dir: Some(PathBuf::from(OWN)),
        socket: None,
        exe: None,
    })
}

/// stead alone, installed in `/opt/tools/bin`, its ledger in `/var/lib/ledger`: names
/// that hold no `stead`, so that a pattern must match its command lines to count.
fn installed() -> Guard {
    Guard::new(&[]).protecting(Protected {
        state_dir: Some(PathBuf::from("/var/lib/ledger")),
        default_state_dir: Some(PathBuf::from("/home/user/.local/state/stead")),
        socket: None,
        exe: Some(PathBuf::from("/opt/tools/bin/stead")),
    })
}

fn check(command: &str) -> Verdict {
    guard().check(command)
}

/// The service a verdict refuses for (`None`: allowed).
fn refused_service(verdict: &Verdict) -> Option<&str> {
    match verdict {
        Verdict::Allow => None,
        Verdict::Refuse(Refusal { service, .. }) => Some(service.as_deref().unwrap_or("(unread)")),
    }
}

fn refusal(command: &str) -> Refusal {
    match check(command) {
        Verdict::Refuse(refusal) => refusal,
        Verdict::Allow => panic!("{command:?} was allowed"),
    }
}

/// `GUARD_COMMAND='…' cargo test -p stead-guard explain -- --ignored --nocapture`
/// prints what the guard makes of a command.
#[test]
#[ignore]
fn explain() {
    let command = std::env::var("GUARD_COMMAND").unwrap_or_default();
    let walked =
        crate::limits::contained(crate::limits::stack(100_000), crate::DEADLINE, move || {
            let start = std::time::Instant::now();
            let dirs = Protected::default();
            let ctx = crate::shell::Context::bare(&dirs, 100_000);
            match crate::shell::walk(&command, &ctx) {
                Ok(walk) => {
                    for event in &walk.events {
                        println!("{event:?}");
                    }
                }
                Err(e) => println!("error: {e}"),
            }
            println!("walked in {:?}", start.elapsed());
        });
    walked.unwrap();
    println!(
        "{:?}",
        check(&std::env::var("GUARD_COMMAND").unwrap_or_default())
    );
}
