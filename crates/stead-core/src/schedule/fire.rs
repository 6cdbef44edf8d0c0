//! Next-fire search. croner finds the wall-clock times an expression matches;
//! this file turns them into instants with Debian cron's daylight-saving
//! rules:
//!
//! - A wall time that happens once fires at that instant.
//! - A wall time skipped by a forward jump (a gap): a fixed-time job fires
//!   once at the end of the gap, however many of its times the gap holds; a
//!   wildcard job does not fire.
//! - A wall time that happens twice (a backward jump, an overlap): a
//!   fixed-time job fires on the first pass only; a wildcard job fires on
//!   both, every first-pass fire before every second-pass one.
//!
//! Fires come out in real-time order because, over an overlap, the wall clock
//! runs through the repeated range twice: the search finishes the pass the
//! start instant is on before it looks at the other.

use croner::Cron;
use jiff::civil::DateTime;
use jiff::tz::{AmbiguousOffset, Offset, TimeZone};
use jiff::{SignedDuration, Timestamp, Zoned};

/// The first fire strictly after `after`, or `None` when there is none
/// up to the year 5000, where croner stops searching.
pub(crate) fn next_after(
    cron: &Cron,
    wildcard: bool,
    tz: &TimeZone,
    after: Timestamp,
) -> Option<Zoned> {
    let wall = tz.to_datetime(after);
    // Croner's patterns fire on whole seconds; the next one is the earliest
    // wall time that can be strictly later than `after`.
    let mut from = wall
        .with()
        .subsec_nanosecond(0)
        .build()
        .ok()?
        .checked_add(SignedDuration::from_secs(1))
        .ok()?;

    if let Some(overlap) = Overlap::around(tz, after, wall) {
        if let Some(fire) = overlap.next_fire(cron, wildcard, tz, from) {
            return Some(fire);
        }
        from = overlap.end;
    }

    loop {
        let wall = first_match(cron, from)?;
        let ambiguous = tz.to_ambiguous_zoned(wall);
        match ambiguous.offset() {
            AmbiguousOffset::Unambiguous { .. } => return ambiguous.unambiguous().ok(),
            // `after` is not inside this overlap (that case was settled
            // above), so the whole overlap lies ahead: the first pass is next.
            AmbiguousOffset::Fold { .. } => return ambiguous.earlier().ok(),
            AmbiguousOffset::Gap { after: offset, .. } => {
                let jump = gap_end(tz, wall, offset)?;
                if !wildcard {
                    return Some(jump.to_zoned(tz.clone()));
                }
                from = offset.to_datetime(jump);
            }
        }
    }
}

fn first_match(cron: &Cron, from: DateTime) -> Option<DateTime> {
    cron.find_next_occurrence(&from, true).ok()
}

/// The instant a gap containing `wall` ends, that is, when the clock jumped.
fn gap_end(tz: &TimeZone, wall: DateTime, offset_after: Offset) -> Option<Timestamp> {
    // Read with the offset from after the jump, a wall time inside the gap
    // names an instant shortly before the jump, so the jump follows it.
    let before_jump = offset_after.to_timestamp(wall).ok()?;
    Some(tz.following(before_jump).next()?.timestamp())
}

/// The repeated wall-clock range of a backward jump, seen from an instant
/// inside it.
struct Overlap {
    /// The first repeated wall time, inclusive.
    start: DateTime,
    /// The end of the repeated range, exclusive.
    end: DateTime,
    first_offset: Offset,
    second_offset: Offset,
    on_first_pass: bool,
}

impl Overlap {
    fn around(tz: &TimeZone, at: Timestamp, wall: DateTime) -> Option<Overlap> {
        let AmbiguousOffset::Fold { before, after } = tz.to_ambiguous_zoned(wall).offset() else {
            return None;
        };
        let on_first_pass = tz.to_offset(at) == before;
        let jump = if on_first_pass {
            tz.following(at).next()?
        } else {
            // The jump is at or before `at`; `preceding` is strictly before.
            tz.preceding(at.checked_add(SignedDuration::from_nanos(1)).ok()?)
                .next()?
        }
        .timestamp();
        Some(Overlap {
            start: after.to_datetime(jump),
            end: before.to_datetime(jump),
            first_offset: before,
            second_offset: after,
            on_first_pass,
        })
    }

    /// The next fire inside the overlap, from wall time `from` on the
    /// current pass; `None` when the rest of the overlap has none.
    fn next_fire(
        &self,
        cron: &Cron,
        wildcard: bool,
        tz: &TimeZone,
        from: DateTime,
    ) -> Option<Zoned> {
        let inside = |wall: &DateTime| *wall < self.end;
        if self.on_first_pass
            && let Some(wall) = first_match(cron, from).filter(inside)
        {
            return at(tz, wall, self.first_offset);
        }
        if !wildcard {
            return None;
        }
        let from = if self.on_first_pass { self.start } else { from };
        let wall = first_match(cron, from).filter(inside)?;
        at(tz, wall, self.second_offset)
    }
}

fn at(tz: &TimeZone, wall: DateTime, offset: Offset) -> Option<Zoned> {
    Some(offset.to_timestamp(wall).ok()?.to_zoned(tz.clone()))
}
