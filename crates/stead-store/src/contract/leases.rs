//! The contract of the lease: claims, renewals, releases and takeovers.

use super::*;

pub(super) fn a_fresh_ledger_has_an_unclaimed_lease(s: &Subject) {
    let store = &*s.store;
    let fresh = LeaseRow {
        epoch: 0,
        owner: None,
        expires_at: from_ms(0),
    };
    assert_eq!(store.lease_row().unwrap(), fresh);
    let never = HeldLease {
        claimant: claimant("a"),
        epoch: 0,
        expires_at: now(),
    };
    assert!(!store.release_lease(&never, now()).unwrap());
    assert_eq!(
        store.renew_lease(&never, now(), TTL).unwrap(),
        RenewOutcome::Superseded(fresh)
    );
}

pub(super) fn claim_bumps_the_epoch_and_refuses_a_live_lease(s: &Subject) {
    let store = &*s.store;
    let a = claim(store, &claimant("a"), t(0));
    assert_eq!(a.epoch, 1);
    match store.claim_lease(&claimant("b"), t(10), TTL, None).unwrap() {
        ClaimOutcome::Held(row) => assert!(row.owned_by(&a)),
        other => panic!("{other:?}"),
    }
    let b = take_over(store, &claimant("b"));
    assert_eq!(b.epoch, 2);
    assert!(store.lease_row().unwrap().owned_by(&b));
}

/// On a ledger of one host the caller's clock is the only clock: expiry is judged by the
/// `now` it passes. (A shared ledger judges by the database's clock instead; see
/// `postgres::tests`.)
pub(super) fn an_expired_lease_is_taken_by_the_callers_clock(s: &Subject) {
    let store = &*s.store;
    let a = claim(store, &claimant("a"), t(0));
    assert_eq!(a.expires_at, t(30));
    let b = claim(store, &claimant("b"), t(31));
    assert_eq!(b.epoch, 2);
    assert!(store.lease_row().unwrap().owned_by(&b));
}

pub(super) fn a_dead_owner_is_taken_over_only_while_the_row_is_unchanged(s: &Subject) {
    let store = &*s.store;
    let a = claim(store, &claimant("a"), t(0));
    let judged = store.lease_row().unwrap();
    // The caller proved a dead: the unexpired row is taken over at once.
    let b = match store
        .claim_lease(&claimant("b"), t(1), TTL, Some(&judged))
        .unwrap()
    {
        ClaimOutcome::Claimed(lease) => lease,
        other => panic!("{other:?}"),
    };
    assert_eq!(b.epoch, a.epoch + 1);
    // A second starter that judged the same old row cannot take b's live lease.
    assert!(matches!(
        store
            .claim_lease(&claimant("c"), t(2), TTL, Some(&judged))
            .unwrap(),
        ClaimOutcome::Held(row) if row.owned_by(&b)
    ));
}

pub(super) fn expired_but_ours_re_arms(s: &Subject) {
    let store = &*s.store;
    let a = claim(store, &claimant("a"), t(0));
    // Slept for an hour: the lease expired long ago, but nobody claimed it.
    match store.renew_lease(&a, t(3600), TTL).unwrap() {
        RenewOutcome::Renewed { expires_at } => assert_eq!(expires_at, t(3630)),
        other => panic!("{other:?}"),
    }
    let row = store.lease_row().unwrap();
    assert!(row.owned_by(&a));
    assert_eq!(row.expires_at, t(3630));
}

pub(super) fn renewal_after_supersession_fails(s: &Subject) {
    let store = &*s.store;
    let a = claim(store, &claimant("a"), t(0));
    let b = take_over(store, &claimant("b"));
    match store.renew_lease(&a, t(101), TTL).unwrap() {
        RenewOutcome::Superseded(row) => {
            assert!(row.owned_by(&b));
            let why = lease::supersession(&a, &row);
            assert!(why.contains("epoch 2 is now held by server b"), "{why}");
        }
        other => panic!("{other:?}"),
    }
    // A superseded owner cannot release its successor's lease either.
    assert!(!store.release_lease(&a, t(102)).unwrap());
    assert!(store.lease_row().unwrap().owned_by(&b));
}

pub(super) fn renewal_with_a_wrong_token_fails(s: &Subject) {
    let store = &*s.store;
    let a = claim(store, &claimant("a"), t(0));
    let mut forged = a.clone();
    forged.claimant.token_hash = lease::token_hash(b"guess");
    assert!(matches!(
        store.renew_lease(&forged, t(1), TTL).unwrap(),
        RenewOutcome::Superseded(_)
    ));
    assert!(!store.release_lease(&forged, t(1)).unwrap());
    assert!(matches!(
        store.renew_lease(&a, t(1), TTL).unwrap(),
        RenewOutcome::Renewed { .. }
    ));
}

pub(super) fn renewal_after_release_fails_and_release_frees_at_once(s: &Subject) {
    let store = &*s.store;
    let a = claim(store, &claimant("a"), t(0));
    assert!(store.release_lease(&a, t(1)).unwrap());
    assert!(!store.release_lease(&a, t(1)).unwrap());
    let row = store.lease_row().unwrap();
    assert_eq!(row.owner, None);
    assert_eq!(row.epoch, 1);
    assert!(matches!(
        store.renew_lease(&a, t(2), TTL).unwrap(),
        RenewOutcome::Superseded(LeaseRow { owner: None, .. })
    ));
    // Released long before expiry, the row is claimable at once.
    assert_eq!(claim(store, &claimant("b"), t(2)).epoch, 2);
}

pub(super) fn two_handles_see_one_lease(s: &Subject) {
    let other = s.open();
    let a = claim(&*s.store, &claimant("a"), t(0));
    assert!(matches!(
        other.claim_lease(&claimant("b"), t(1), TTL, None).unwrap(),
        ClaimOutcome::Held(_)
    ));
    assert!(other.lease_row().unwrap().owned_by(&a));
}

pub(super) fn racing_claimants_elect_one(s: &Subject) {
    let outcomes = race(s, 6, |h| {
        h.claim_lease(&claimant("racer"), now(), TTL, None).unwrap()
    });
    let won: Vec<_> = outcomes
        .iter()
        .filter_map(|o| match o {
            ClaimOutcome::Claimed(lease) => Some(lease),
            ClaimOutcome::Held(_) => None,
        })
        .collect();
    assert_eq!(won.len(), 1, "{outcomes:?}");
    assert_eq!(won[0].epoch, 1);
    assert!(s.store.lease_row().unwrap().owned_by(won[0]));
}
