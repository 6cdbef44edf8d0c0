//! Overdue jobs: a job that says it expects a success within a while (`expect_within`)
//! is overdue once that long has passed since its last success, or since it was added
//! when it never succeeded. The lapse begins at that instant and lasts until the next
//! success; it is told of once.

use std::time::Duration;

use jiff::Timestamp;

use crate::clock::span;

/// When the job's current lapse began, if it is overdue at `now`: `within` after its
/// last success, or after it was `added` when it has none.
pub fn lapse(
    within: Duration,
    last_success: Option<Timestamp>,
    added: Timestamp,
    now: Timestamp,
) -> Option<Timestamp> {
    let from = last_success.unwrap_or(added);
    let due = from.checked_add(span(within)).unwrap_or(Timestamp::MAX);
    (due <= now).then_some(due)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: i64) -> Timestamp {
        Timestamp::from_second(1_800_000_000 + s).unwrap()
    }

    #[test]
    fn overdue_from_the_last_success_or_from_when_it_was_added() {
        let hour = Duration::from_secs(3600);
        let cases = [
            // (last success, added, now, lapse began)
            (None, t(0), t(3599), None),
            (None, t(0), t(3600), Some(t(3600))),
            (None, t(0), t(90_000), Some(t(3600))),
            (Some(t(5000)), t(0), t(8599), None),
            (Some(t(5000)), t(0), t(8600), Some(t(8600))),
            // A success long after it was added: counted from the success.
            (Some(t(10_000)), t(0), t(9000), None),
        ];
        for (last, added, now, began) in cases {
            assert_eq!(
                lapse(hour, last, added, now),
                began,
                "{last:?} {added} {now}"
            );
        }
        // A span past any representable time is never due.
        assert_eq!(lapse(Duration::MAX, None, t(0), t(1)), None);
    }
}
