//! Delivering notifications: the outbox's events POSTed to their notifiers, in order,
//! each until its receiver answers 2xx, with backoff between attempts.
//!
//! Events are written by the transactions whose outcomes cause them, so none is lost to
//! a crash; this task only carries them out. A receiver that is down gets every event
//! once it is back, oldest first (one notifier's events never overtake each other), each
//! with its event id (`X-Stead-Event-Id`, and `id` in the body) for de-duplication: an
//! event whose delivery was accepted but not recorded (a crash in between) is delivered
//! again. On a shared ledger the scheduler's leader delivers, so each event goes out
//! from one host at a time.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use hmac::{Hmac, KeyInit, Mac};
use jiff::Timestamp;
use sha2::Sha256;
use stead_core::records::OutboxRow;
use stead_protocol::NotifierSpec;
use tokio::sync::Notify;
use tracing::{info, warn};

use crate::request::ledger_calls::blocking;
use crate::shared::Shared;

/// How long one delivery may take before it counts as failed.
const DELIVERY_TIMEOUT: Duration = Duration::from_secs(10);
/// The first pause after a failed delivery; it doubles up to [`LAST_PAUSE`].
const FIRST_PAUSE: Duration = Duration::from_secs(1);
const LAST_PAUSE: Duration = Duration::from_secs(300);
/// How long to wait before reading the outbox again after the ledger could not be read.
const READ_AGAIN: Duration = Duration::from_secs(5);
/// Delivered events are kept this long, then pruned (with the retention pass).
const KEEP_DELIVERED: Duration = Duration::from_secs(7 * 24 * 3600);

/// The header carrying the event id.
pub const EVENT_ID_HEADER: &str = "X-Stead-Event-Id";
/// The header carrying the signature: `sha256=` and the hex HMAC-SHA256 of the body.
pub const SIGNATURE_HEADER: &str = "X-Stead-Signature";

/// Delivers while this server leads. Every event is written with a change of its run's
/// row, which wakes this task (a monitor's end on this host, the ledger's announcement
/// from another); otherwise it sleeps until the next attempt is due. Each notifier's
/// events are carried by a task of its own, one at a time and in order, so a receiver
/// that hangs until the timeout holds back only its own events.
pub async fn run(shared: Arc<Shared>) {
    let mut leader = shared.leader.subscribe();
    let carriers = Carriers::default();
    let mut passed = false;
    loop {
        let mut events = shared.run_events.subscribe();
        let leading = *leader.borrow_and_update();
        let wake = match leading {
            Some(epoch) => pass(&shared, epoch, &carriers).await,
            None => Wake::OnEvent,
        };
        shared.passed(&mut passed);
        let clock = shared.world.clock.clone();
        tokio::select! {
            () = shared.stop.cancelled() => return,
            // No notifier, no event: a run's change cannot bring one.
            _ = events.recv(), if !matches!(wake, Wake::NoNotifier) => {}
            () = shared.wake.notifiers_changed.notified() => {}
            () = carriers.done.notified() => {}
            _ = leader.changed() => {}
            () = async {
                match wake {
                    Wake::At(at) => clock.sleep_until(at).await,
                    Wake::After(pause) => tokio::time::sleep(pause).await,
                    Wake::OnEvent | Wake::NoNotifier => std::future::pending().await,
                }
            } => {}
        }
    }
}

/// The notifiers whose events a task is carrying now, and how such a task says it is
/// done (its notifier has nothing more due, or the ledger failed it).
#[derive(Default, Clone)]
struct Carriers {
    busy: Arc<Mutex<BTreeSet<String>>>,
    done: Arc<Notify>,
}

/// When to look at the outbox again, besides on a run's change.
enum Wake {
    /// The next attempt is due then.
    At(Timestamp),
    /// The ledger could not be read: after this long.
    After(Duration),
    /// Nothing is pending, or only what a carrier is delivering.
    OnEvent,
    /// There is no notifier: no event is written until one is added (which wakes this
    /// task through `notifiers_changed`, on this host or, announced, on another).
    NoNotifier,
}

/// Starts a carrier for every notifier with an event due and none carrying it; says when
/// to look again.
async fn pass(shared: &Arc<Shared>, epoch: i64, carriers: &Carriers) -> Wake {
    let now = shared.world.clock.now();
    let found = blocking(shared, move |s| {
        let due = s.world.store.outbox_due(now)?;
        let notifiers = s.world.store.notifier_list()?;
        let next = s.world.store.outbox_next()?;
        Ok((due, notifiers, next))
    })
    .await;
    let (due, notifiers, next) = match found {
        Ok(found) => found,
        Err(e) => {
            warn!(cause = %e.message, "failed to read the notification outbox");
            return Wake::After(READ_AGAIN);
        }
    };
    for row in due {
        let Some(spec) = notifiers.iter().find(|n| n.name == row.notifier).cloned() else {
            continue;
        };
        let mut busy = carriers.busy.lock().unwrap_or_else(|p| p.into_inner());
        if !busy.insert(spec.name.clone()) {
            continue;
        }
        drop(busy);
        tokio::spawn(carry(shared.clone(), epoch, spec, row, carriers.clone()));
    }
    match next {
        None if notifiers.is_empty() => Wake::NoNotifier,
        Some(at) if at > now => Wake::At(at),
        // Due now: a carrier has it, and says when it is done.
        Some(_) | None => Wake::OnEvent,
    }
}

/// Delivers `first` and then each next event of `spec`'s that is due, in order, recording
/// every attempt; stops at the first that is not delivered (it waits out its backoff).
async fn carry(
    shared: Arc<Shared>,
    epoch: i64,
    spec: NotifierSpec,
    first: OutboxRow,
    carriers: Carriers,
) {
    let mut row = Some(first);
    while let Some(event) = row.take() {
        let delivered = attempt(&shared, epoch, &spec, &event).await;
        match delivered {
            Ok(true) => {
                let now = shared.world.clock.now();
                let name = spec.name.clone();
                let next = blocking(&shared, move |s| {
                    Ok(s.world
                        .store
                        .outbox_due(now)?
                        .into_iter()
                        .find(|r| r.notifier == name))
                })
                .await;
                match next {
                    Ok(next) => row = next,
                    Err(e) => {
                        warn!(cause = %e.message, "failed to read the notification outbox");
                        tokio::time::sleep(READ_AGAIN).await;
                    }
                }
            }
            Ok(false) => {}
            // The ledger refused the record (fenced, or failing): pause before the event
            // is tried again, rather than spin on it.
            Err(()) => tokio::time::sleep(READ_AGAIN).await,
        }
    }
    carriers
        .busy
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .remove(&spec.name);
    carriers.done.notify_one();
}

/// One delivery of `row` to `spec`, recorded: `Ok(true)` delivered, `Ok(false)` refused
/// (retried after its backoff), `Err` when the attempt could not be recorded.
async fn attempt(
    shared: &Arc<Shared>,
    epoch: i64,
    spec: &NotifierSpec,
    row: &OutboxRow,
) -> Result<bool, ()> {
    let outcome = deliver(shared, spec, row).await;
    let at = shared.world.clock.now();
    let delivered = outcome.is_ok();
    let recorded = match outcome {
        Ok(status) => {
            info!(notifier = %spec.name, event = %row.event_id, status, "notification delivered");
            Ok(at)
        }
        Err(why) => {
            let pause = FIRST_PAUSE
                .saturating_mul(1u32 << row.attempts.min(16))
                .min(LAST_PAUSE);
            warn!(notifier = %spec.name, event = %row.event_id, cause = %why, retry_in = ?pause, "notification not delivered");
            let next = at
                .checked_add(jiff::SignedDuration::try_from(pause).unwrap_or_default())
                .unwrap_or(at);
            Err((why, next))
        }
    };
    let id = row.id;
    match blocking(shared, move |s| {
        s.world.store.outbox_attempted(id, &recorded, epoch)
    })
    .await
    {
        Ok(()) => Ok(delivered),
        Err(e) => {
            warn!(cause = %e.message, "failed to record a notification attempt");
            Err(())
        }
    }
}

/// POSTs one event; answers the receiver's 2xx status, or why it was not delivered.
async fn deliver(
    shared: &Arc<Shared>,
    spec: &NotifierSpec,
    row: &OutboxRow,
) -> Result<u16, String> {
    let secret = match spec.sign {
        true => Some(secret(shared, &spec.name)?),
        false => None,
    };
    let (url, body, id) = (spec.url.clone(), row.payload.clone(), row.event_id.clone());
    tokio::task::spawn_blocking(move || post(&url, &body, &id, secret.as_deref()))
        .await
        .map_err(|e| e.to_string())?
        .map_err(|refused| refused.why)
}

/// Why a POST was not delivered: the receiver's status, when it answered, and in words.
#[derive(Debug)]
pub struct Refused {
    pub status: Option<u16>,
    pub why: String,
}

/// One POST of `body`; 2xx is delivered, anything else is why not.
pub fn post(url: &str, body: &str, event_id: &str, secret: Option<&str>) -> Result<u16, Refused> {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .timeout_global(Some(DELIVERY_TIMEOUT))
        .http_status_as_error(false)
        .user_agent(concat!("stead/", env!("CARGO_PKG_VERSION")))
        .build()
        .into();
    let mut request = agent
        .post(url)
        .header("Content-Type", "application/json")
        .header(EVENT_ID_HEADER, event_id);
    if let Some(secret) = secret {
        request = request.header(SIGNATURE_HEADER, &signature(secret, body));
    }
    // What is said of a failure is kept in the ledger and shown: never the URL's token.
    let url = stead_protocol::redact_notifier_url(url);
    match request.send(body) {
        Ok(response) if response.status().is_success() => Ok(response.status().as_u16()),
        Ok(response) => Err(Refused {
            status: Some(response.status().as_u16()),
            why: format!("{url} answered {}", response.status()),
        }),
        Err(e) => Err(Refused {
            status: None,
            why: format!("{url}: {e}"),
        }),
    }
}

/// `sha256=` and the hex HMAC-SHA256 of `body` under `secret`.
pub fn signature(secret: &str, body: &str) -> String {
    let mut mac =
        Hmac::<Sha256>::new_from_slice(secret.as_bytes()).expect("HMAC takes a key of any length");
    mac.update(body.as_bytes());
    let digest = mac.finalize().into_bytes();
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    format!("sha256={hex}")
}

/// Where a notifier's signing secret is kept.
pub fn secret_path(shared: &Shared, name: &str) -> PathBuf {
    shared
        .world
        .paths
        .dir()
        .join("notify")
        .join(format!("{name}.secret"))
}

/// A notifier's signing secret, made (32 random bytes, hex, mode 0600) when missing.
pub fn secret(shared: &Shared, name: &str) -> Result<String, String> {
    let path = secret_path(shared, name);
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    crate::request::web::load_or_create_token(&path).map_err(|e| format!("{}: {e}", path.display()))
}

/// Deletes events delivered long ago (part of the retention pass).
pub async fn prune(shared: &Arc<Shared>) {
    let before = shared
        .world
        .clock
        .now()
        .checked_sub(jiff::SignedDuration::try_from(KEEP_DELIVERED).unwrap_or_default())
        .unwrap_or(Timestamp::MIN);
    let epoch = shared.epoch();
    if let Err(e) = blocking(shared, move |s| s.world.store.outbox_prune(before, epoch)).await {
        warn!(cause = %e.message, "failed to prune delivered notifications");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_signature_is_the_hmac_sha256_of_the_body() {
        // RFC 4231, test case 2.
        assert_eq!(
            signature("Jefe", "what do ya want for nothing?"),
            "sha256=5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
    }
}
