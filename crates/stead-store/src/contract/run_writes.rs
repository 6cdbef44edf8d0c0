//! The contract of writes committed together: each answered as it would be alone, a
//! refused one undone alone.

use stead_core::records::OnDemand;
use stead_protocol::RunParams;

use super::*;
use crate::backend::Guard;
use crate::backend::sealed::Backend;
use crate::{Mark, RunWrite, RunWritten};

fn mark(id: i64) -> Mark {
    Mark {
        run_id: id,
        monitor_pid: 1,
        monitor_identity: me(),
        started_at: now(),
    }
}

static NO_PARAMS: RunParams = RunParams {
    env: std::collections::BTreeMap::new(),
    args: Vec::new(),
};

/// An on-demand run as a server of machine `m` makes one.
fn on_demand() -> OnDemand<'static> {
    OnDemand {
        params: &NO_PARAMS,
        machine_id: "m",
        boot_id: "b",
        now: now(),
        default_limit: false,
    }
}

/// An on-demand run written waiting for its turn (a limit on runs at once).
fn waiting_its_turn() -> OnDemand<'static> {
    OnDemand {
        default_limit: true,
        ..on_demand()
    }
}

/// An admission of an on-demand run of `job`, fenced by `epoch`, that no waiting
/// monitor takes.
fn admit<'a>(job: &'a str, planner: &'a Planner, epoch: i64) -> RunWrite<'a> {
    RunWrite::Admit {
        job,
        on_demand: on_demand(),
        planner,
        epoch,
        taker: None,
    }
}

pub(super) fn writes_of_runs_are_answered_each_as_alone_and_seen_once_committed(s: &Subject) {
    let l = serve(s);
    let j = l.job("a", Concurrency::Allow);
    let queued = l.queue(&j);
    let running = l.queue(&j);
    assert!(l.store.mark_running(running, 1, &me(), now()).unwrap());
    let ended = l.queue(&j);
    assert!(l.store.mark_running(ended, 1, &me(), now()).unwrap());
    assert!(l.store.finish(ended, &RunEnd::exited(0, now())).unwrap());
    let (m_queued, m_running) = (mark(queued), mark(running));
    let (done, again) = (RunEnd::exited(3, t(1)), RunEnd::exited(0, t(1)));
    let planner = planner();
    let writes = [
        admit("a", &planner, l.epoch),
        admit("missing", &planner, l.epoch),
        RunWrite::Mark(&m_queued),
        RunWrite::Mark(&m_running),
        RunWrite::End(running, &done),
        RunWrite::End(ended, &again),
    ];
    let answers = l.store.write_runs(&writes).unwrap();
    assert_eq!(answers.len(), writes.len());
    let admitted = match &answers[0] {
        Ok(RunWritten::Admitted(a)) => a.clone(),
        other => panic!("{other:?}"),
    };
    assert_eq!(admitted.run.status, RunStatus::Queued);
    assert_eq!(admitted.run.job, "a");
    let plan = admitted.plan.as_ref().expect("a queued run has its plan");
    assert_eq!(plan.run_id, admitted.run.id);
    assert!(
        matches!(&answers[1], Err(StoreError::Refused(Refusal::NoSuchJob(name))) if name == "missing")
    );
    assert!(matches!(answers[2], Ok(RunWritten::Marked(true))));
    assert!(matches!(answers[3], Ok(RunWritten::Marked(false))));
    assert!(matches!(answers[4], Ok(RunWritten::Ended(true))));
    assert!(matches!(answers[5], Ok(RunWritten::Ended(false))));
    // Committed: another handle (another process) reads every write.
    let other = s.open();
    let status = |id| other.run_get(id).unwrap().unwrap().status;
    assert_eq!(status(admitted.run.id), RunStatus::Queued);
    assert_eq!(status(queued), RunStatus::Running);
    assert_eq!(status(running), RunStatus::Failed);
    assert_eq!(status(ended), RunStatus::Succeeded);
    assert_eq!(
        other.run_get(running).unwrap().unwrap().exit_code,
        Some(3),
        "the end as it was sent"
    );
}

pub(super) fn a_refused_write_is_undone_alone(s: &Subject) {
    let l = serve(s);
    let j = l.job("a", Concurrency::Allow);
    let queued = l.queue(&j);
    let before = l.all_runs().len();
    let m = mark(queued);
    let planner = planner();
    let answers = l
        .store
        .write_runs(&[
            admit("missing", &planner, l.epoch),
            RunWrite::Mark(&m),
            admit("a", &planner, l.epoch + 1),
        ])
        .unwrap();
    assert!(
        matches!(&answers[0], Err(StoreError::Refused(Refusal::NoSuchJob(name))) if name == "missing")
    );
    assert!(matches!(answers[1], Ok(RunWritten::Marked(true))));
    assert!(matches!(
        &answers[2],
        Err(StoreError::Refused(Refusal::Fenced { .. }))
    ));
    assert_eq!(
        l.all_runs().len(),
        before,
        "neither refused admission left a row"
    );
    assert_eq!(l.status(queued), RunStatus::Running);
    // Alone in its transaction (no savepoint then), it is refused just as well.
    let answers = l
        .store
        .write_runs(&[admit("a", &planner, l.epoch + 1)])
        .unwrap();
    assert!(matches!(
        &answers[..],
        [Err(StoreError::Refused(Refusal::Fenced { .. }))]
    ));
    assert_eq!(l.all_runs().len(), before, "the lone refusal left no row");
}

/// What a part of a transaction wrote before it was refused is undone with it alone,
/// beside parts that commit (a savepoint each), and alone in its transaction too (the
/// transaction rolled back): each backend's `write_each`, called from its own tests.
pub(crate) fn a_part_refused_after_it_wrote_is_undone_alone<B: Backend + Store>(store: &B) {
    let epoch = claim(store, &claimant("s"), now()).epoch;
    let insert = |name: &'static str, refuse: bool| {
        move |tx: &mut B::Tx<'_>| -> Result<(), StoreError> {
            crate::backend::JobSteps::job_insert(tx, &spec(name, Concurrency::Allow), now())?;
            if refuse {
                return Err(StoreError::Refused(Refusal::NoSuchRun(0)));
            }
            Ok(())
        }
    };
    let (mut kept, mut undone) = (insert("kept", false), insert("undone", true));
    let answers = store
        .write_each(&mut [
            (Guard::Host(epoch), &mut kept),
            (Guard::Host(epoch), &mut undone),
        ])
        .unwrap();
    assert!(matches!(
        answers[..],
        [Ok(()), Err(StoreError::Refused(Refusal::NoSuchRun(0)))]
    ));
    let names = || -> Vec<String> {
        store
            .job_list()
            .unwrap()
            .into_iter()
            .map(|j| j.spec.name)
            .collect()
    };
    assert_eq!(names(), ["kept"], "the refused part's job is undone alone");
    let mut alone = insert("alone", true);
    let answers = store
        .write_each(&mut [(Guard::Host(epoch), &mut alone)])
        .unwrap();
    assert!(matches!(
        answers[..],
        [Err(StoreError::Refused(Refusal::NoSuchRun(0)))]
    ));
    assert_eq!(names(), ["kept"], "the lone refused part left nothing");
}

pub(super) fn a_batch_of_marks_alone_commits(s: &Subject) {
    let l = serve(s);
    let j = l.job("a", Concurrency::Allow);
    let ids: Vec<i64> = (0..3).map(|_| l.queue(&j)).collect();
    let marks: Vec<Mark> = ids.iter().map(|&id| mark(id)).collect();
    let writes: Vec<RunWrite<'_>> = marks.iter().map(RunWrite::Mark).collect();
    let answers = l.store.write_runs(&writes).unwrap();
    assert!(
        answers
            .iter()
            .all(|a| matches!(a, Ok(RunWritten::Marked(true))))
    );
    let other = s.open();
    for id in ids {
        assert_eq!(
            other.run_get(id).unwrap().unwrap().status,
            RunStatus::Running
        );
    }
}

pub(super) fn an_admission_taken_by_a_waiting_monitor_is_marked_running_in_its_commit(s: &Subject) {
    let l = serve(s);
    l.job("a", Concurrency::Allow);
    let forbid = l.job("s", Concurrency::Forbid);
    let busy = l.queue(&forbid);
    let identity = me();
    let planner = planner();
    let taken_by_77 = |job, on_demand| RunWrite::Admit {
        job,
        on_demand,
        planner: &planner,
        epoch: l.epoch,
        taker: Some((77, &identity)),
    };
    let answers = l
        .store
        .write_runs(&[
            taken_by_77("a", on_demand()),
            taken_by_77("s", on_demand()),
            taken_by_77("a", waiting_its_turn()),
        ])
        .unwrap();
    let admitted = |i: usize| match &answers[i] {
        Ok(RunWritten::Admitted(a)) => a.clone(),
        other => panic!("{other:?}"),
    };
    let (taken, skipped, waits) = (admitted(0), admitted(1), admitted(2));
    assert_eq!(taken.run.status, RunStatus::Running, "answered as marked");
    assert_eq!(taken.run.monitor_pid, Some(77));
    assert!(taken.run.started_at.is_some());
    assert_eq!(taken.plan.as_ref().map(|p| p.run_id), Some(taken.run.id));
    // A run that does not start now is not marked for anyone.
    assert_eq!(skipped.run.status, RunStatus::Skipped);
    assert_eq!(l.status(busy), RunStatus::Queued);
    assert_eq!(
        waits.run.status,
        RunStatus::Queued,
        "written waiting its turn"
    );
    assert_eq!(waits.run.monitor_pid, None);
    // Committed as one: another handle reads the row running, with the monitor's
    // identity, so a server coming back finds the run's monitor as its own mark would
    // have left it.
    let other = s.open();
    let active = other.runs_active("m").unwrap();
    let row = active
        .iter()
        .find(|r| r.id == taken.run.id)
        .expect("active");
    assert_eq!(row.status, RunStatus::Running);
    assert_eq!(row.monitor, Some((77, identity.clone())));
}
