//! The contract of the catalog: jobs, services, holds and `apply`.

use super::*;

pub(super) fn a_removed_jobs_id_is_never_given_again(s: &Subject) {
    let l = serve(s);
    l.job("a", Concurrency::Forbid);
    let b = l.job("b", Concurrency::Forbid);
    l.queue(&b);
    l.store.job_remove("b", l.epoch).unwrap();
    // Were b's id handed out again, c would inherit b's run in flight (an overlap).
    let c = l.job("c", Concurrency::Forbid);
    assert!(c.id > b.id, "job c got id {}, b had {}", c.id, b.id);
    let first = l.admit(&new_run(&c, Trigger::OnDemand, None)).unwrap();
    assert_eq!(first.run.status, RunStatus::Queued);
}

pub(super) fn jobs_are_inserted_listed_updated_and_removed(s: &Subject) {
    let l = serve(s);
    for name in ["b", "B", "a_1"] {
        l.job(name, Concurrency::Forbid);
    }
    // Bytewise, whatever the database's locale.
    let names: Vec<_> = l
        .store
        .job_list()
        .unwrap()
        .into_iter()
        .map(|j| j.spec.name)
        .collect();
    assert_eq!(names, ["B", "a_1", "b"]);

    let b = l.store.job_get("b").unwrap().unwrap();
    assert_eq!(b.spec, spec("b", Concurrency::Forbid));
    assert_eq!(
        (b.created_at, b.updated_at, b.anchor),
        (now(), now(), now())
    );
    assert_eq!(b.fired_through, None);
    assert_eq!(l.store.job_get("c").unwrap(), None);
    assert!(matches!(
        l.store.job_insert(&spec("b", Concurrency::Allow), now(), l.epoch),
        Err(StoreError::Refused(Refusal::JobExists(name))) if name == "b"
    ));

    // An edit that keeps the schedule keeps its fire count.
    let mut edited = spec("b", Concurrency::Allow);
    edited.enabled = false;
    let updated = l.store.job_update(&edited, false, t(10), l.epoch).unwrap();
    assert_eq!(updated.id, b.id);
    assert_eq!(updated.spec, edited);
    assert_eq!(
        (updated.updated_at, updated.anchor, updated.fired_through),
        (t(10), now(), None)
    );
    // A new schedule counts its fires from the change.
    let rescheduled = l.store.job_update(&edited, true, t(20), l.epoch).unwrap();
    assert_eq!(
        (rescheduled.anchor, rescheduled.fired_through),
        (t(20), Some(t(20)))
    );
    assert_eq!(l.store.job_get("b").unwrap().unwrap(), rescheduled);
    assert!(matches!(
        l.store.job_update(&spec("c", Concurrency::Allow), false, now(), l.epoch),
        Err(StoreError::Refused(Refusal::NoSuchJob(name))) if name == "c"
    ));

    assert_eq!(l.store.job_remove("b", l.epoch).unwrap(), rescheduled);
    assert_eq!(l.store.job_get("b").unwrap(), None);
    assert!(matches!(
        l.store.job_remove("b", l.epoch),
        Err(StoreError::Refused(Refusal::NoSuchJob(_)))
    ));
    assert_eq!(l.store.job_list().unwrap().len(), 2);
}

pub(super) fn apply_is_all_or_nothing(s: &Subject) {
    let l = serve(s);
    let mut dependent = spec("x", Concurrency::Forbid);
    dependent.depends_on = vec!["db".into()];
    // The second job fails: the service and the first job are not written either.
    let failing = Changes {
        create_services: vec![service("db")],
        create_jobs: vec![dependent.clone(), dependent.clone()],
        ..Changes::default()
    };
    assert!(matches!(
        l.store.apply(&failing, now(), l.epoch),
        Err(StoreError::Refused(Refusal::JobExists(_)))
    ));
    assert!(l.store.service_list().unwrap().is_empty());
    assert!(l.store.job_list().unwrap().is_empty());

    let creating = Changes {
        create_services: vec![service("db")],
        create_jobs: vec![dependent.clone()],
        ..Changes::default()
    };
    l.store.apply(&creating, now(), l.epoch).unwrap();
    // A service still named in depends_on cannot go, nor anything else in that apply.
    let orphaning = Changes {
        create_jobs: vec![spec("y", Concurrency::Forbid)],
        remove_services: vec!["db".into()],
        ..Changes::default()
    };
    match l.store.apply(&orphaning, now(), l.epoch) {
        Err(StoreError::Refused(Refusal::ServiceInUse { service, jobs })) => {
            assert_eq!((service.as_str(), jobs), ("db", vec!["x".to_string()]));
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(l.store.job_get("y").unwrap(), None);
    assert_eq!(l.store.service_list().unwrap().len(), 1);
    // Jobs go before services, so both can go in one apply.
    let removing = Changes {
        remove_jobs: vec!["x".into()],
        remove_services: vec!["db".into()],
        ..Changes::default()
    };
    l.store.apply(&removing, now(), l.epoch).unwrap();
    assert!(l.store.job_list().unwrap().is_empty());
    assert!(l.store.service_list().unwrap().is_empty());
}

pub(super) fn apply_updates_services_and_jobs(s: &Subject) {
    let l = serve(s);
    l.store
        .service_insert(&service("db"), now(), l.epoch)
        .unwrap();
    let job = l.job("x", Concurrency::Forbid);
    let mut db = service("db");
    db.restart = Some("systemctl restart db".into());
    let mut x = spec("x", Concurrency::Allow);
    x.depends_on = vec!["db".into()];
    let changes = Changes {
        update_services: vec![db.clone()],
        update_jobs: vec![(x.clone(), true)],
        ..Changes::default()
    };
    l.store.apply(&changes, t(5), l.epoch).unwrap();
    assert_eq!(l.store.service_list().unwrap()[0].spec, db);
    let stored = l.store.job_get("x").unwrap().unwrap();
    assert_eq!((stored.id, stored.spec, stored.anchor), (job.id, x, t(5)));
    let missing = Changes {
        update_services: vec![service("cache")],
        ..Changes::default()
    };
    assert!(matches!(
        l.store.apply(&missing, now(), l.epoch),
        Err(StoreError::Refused(Refusal::NoSuchService(name))) if name == "cache"
    ));
}

pub(super) fn services_are_inserted_listed_and_removed(s: &Subject) {
    let l = serve(s);
    for name in ["db", "cache"] {
        let stored = l
            .store
            .service_insert(&service(name), now(), l.epoch)
            .unwrap();
        assert_eq!(
            (stored.spec, stored.restarting_since),
            (service(name), None)
        );
    }
    assert!(matches!(
        l.store.service_insert(&service("db"), now(), l.epoch),
        Err(StoreError::Refused(Refusal::ServiceExists(name))) if name == "db"
    ));
    let names: Vec<_> = l
        .store
        .service_list()
        .unwrap()
        .into_iter()
        .map(|svc| svc.spec.name)
        .collect();
    assert_eq!(names, ["cache", "db"]);

    l.store
        .service_set_restarting("db", Some(t(3)), l.epoch)
        .unwrap();
    assert_eq!(l.store.services_restarting().unwrap(), ["db"]);
    let db = l.store.service_list().unwrap().pop().unwrap();
    assert_eq!(db.restarting_since, Some(t(3)));
    l.store.service_set_restarting("db", None, l.epoch).unwrap();
    assert!(l.store.services_restarting().unwrap().is_empty());

    let mut dependent = spec("x", Concurrency::Forbid);
    dependent.depends_on = vec!["db".into()];
    l.store.job_insert(&dependent, now(), l.epoch).unwrap();
    assert!(matches!(
        l.store.service_remove("db", l.epoch),
        Err(StoreError::Refused(Refusal::ServiceInUse { .. }))
    ));
    let removed = l.store.service_remove("cache", l.epoch).unwrap();
    assert_eq!(removed.spec, service("cache"));
    assert_eq!(l.store.service_list().unwrap().len(), 1);
}

pub(super) fn holds_renew_keeping_their_first_acquisition(s: &Subject) {
    let l = serve(s);
    let hold = |name: &str, acquired: i64, expires: i64| StoredHold {
        name: name.into(),
        service: "db".into(),
        acquired_at: t(acquired),
        expires_at: t(expires),
    };
    assert_eq!(
        l.store
            .hold_upsert(&hold("migrate", 0, 10), l.epoch)
            .unwrap(),
        hold("migrate", 0, 10)
    );
    // Renewed: a new expiry, the first acquisition kept.
    assert_eq!(
        l.store
            .hold_upsert(&hold("migrate", 5, 20), l.epoch)
            .unwrap(),
        hold("migrate", 0, 20)
    );
    l.store.hold_upsert(&hold("backup", 1, 2), l.epoch).unwrap();
    assert_eq!(
        l.store.hold_list().unwrap(),
        [hold("backup", 1, 2), hold("migrate", 0, 20)]
    );
    assert_eq!(
        l.store.hold_remove("migrate", l.epoch).unwrap(),
        hold("migrate", 0, 20)
    );
    assert!(matches!(
        l.store.hold_remove("migrate", l.epoch),
        Err(StoreError::Refused(Refusal::NoSuchHold(name))) if name == "migrate"
    ));
    assert_eq!(l.store.hold_list().unwrap(), [hold("backup", 1, 2)]);
}
