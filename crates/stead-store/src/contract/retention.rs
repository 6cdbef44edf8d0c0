//! The contract of retention: which runs a prune removes, which it never does, how its
//! batches are fenced, and how a pruned log is recorded.

use super::*;
use crate::KeepRule;

impl Server<'_> {
    /// An on-demand run of `job` that ran and succeeded.
    fn done(&self, job: &StoredJob) -> i64 {
        let id = self.queue(job);
        assert!(self.store.mark_running(id, 1, &me(), now()).unwrap());
        assert!(self.store.finish(id, &RunEnd::exited(0, t(1))).unwrap());
        id
    }

    /// Every batch of `rule`, as a prune by the leader runs them; the ids removed (or
    /// that would be).
    fn prune(&self, rule: &KeepRule, dry_run: bool, leader: i64) -> Vec<i64> {
        let mut ids = Vec::new();
        let mut after = 0;
        loop {
            let batch = self
                .store
                .prune_batch(rule, after, dry_run, leader)
                .unwrap();
            ids.extend(batch.runs.iter().map(|r| r.id));
            match batch.next_after {
                Some(next) => after = next,
                None => return ids,
            }
        }
    }

    fn ids(&self) -> Vec<i64> {
        let mut ids: Vec<i64> = self.all_runs().iter().map(|r| r.id).collect();
        ids.sort_unstable();
        ids
    }
}

fn keep(job: &StoredJob, keep_runs: Option<u32>, created_before: Timestamp) -> KeepRule {
    KeepRule {
        job_id: job.id,
        keep_runs,
        created_before,
    }
}

pub(super) fn a_prune_keeps_the_newest_and_never_the_owed_the_latest_or_a_parent(s: &Subject) {
    let (l, leader) = lead(s);
    let j = l.job("a", Concurrency::Allow);
    let other = l.job("b", Concurrency::Allow);
    let owed = l.interrupted(&j);
    let parent = l.interrupted(&j);
    let resume = l.admit(&resume_of(&j, parent, None)).unwrap().run.id;
    assert!(l.store.mark_running(resume, 1, &me(), now()).unwrap());
    assert!(l.store.finish(resume, &RunEnd::exited(0, t(1))).unwrap());
    let done: Vec<i64> = (0..10).map(|_| l.done(&j)).collect();
    let queued = l.queue(&j);
    let others: Vec<i64> = (0..3).map(|_| l.done(&other)).collect();
    let before = l.ids();

    // Keep 2: the newest two stay, and of the older ones the owed run and the parent of
    // a run still there.
    let rule = keep(&j, Some(2), t(-3600));
    let mut expected = vec![resume];
    expected.extend(&done[..9]);
    assert_eq!(
        l.prune(&rule, true, leader),
        expected,
        "a dry run says what would go"
    );
    assert_eq!(l.ids(), before, "a dry run deletes nothing");
    assert_eq!(l.prune(&rule, false, leader), expected);
    assert!(l.store.run_get(resume).unwrap().is_none());
    let mut left = vec![owed, parent, done[9], queued];
    left.extend(&others);
    assert_eq!(l.ids(), left);
    // Its resume gone, the parent goes at the next prune.
    assert_eq!(l.prune(&rule, false, leader), [parent]);
    assert!(l.prune(&rule, false, leader).is_empty());

    // By age: everything created before the cut-off but the owed run, the latest run and
    // the run in flight; another job's rule is its own.
    let rule = keep(&j, None, t(10));
    assert_eq!(l.prune(&rule, false, leader), [done[9]]);
    assert_eq!(l.ids(), [owed, queued, others[0], others[1], others[2]]);
    assert_eq!(
        l.prune(&keep(&other, None, t(10)), false, leader),
        others[..2]
    );
    assert_eq!(l.ids(), [owed, queued, others[2]]);
    // Nothing younger than the cut-off goes.
    assert!(
        l.prune(&keep(&other, None, t(-10)), false, leader)
            .is_empty()
    );

    let mut jobs = l.store.retention_job_ids().unwrap();
    jobs.sort_unstable();
    assert_eq!(jobs, [j.id, other.id]);
}

pub(super) fn a_prune_removes_a_removed_jobs_runs_by_its_id(s: &Subject) {
    let (l, leader) = lead(s);
    let j = l.job("gone", Concurrency::Allow);
    let runs: Vec<i64> = (0..3).map(|_| l.done(&j)).collect();
    l.store.job_remove("gone", l.epoch).unwrap();
    assert_eq!(l.store.retention_job_ids().unwrap(), [j.id]);
    assert_eq!(
        l.prune(&keep(&j, Some(1), t(-10)), false, leader),
        runs[..2]
    );
    assert_eq!(l.ids(), [runs[2]]);
}

pub(super) fn pruning_rows_is_fenced_by_the_leader_epoch(s: &Subject) {
    let (l, leader) = lead(s);
    let j = l.job("a", Concurrency::Allow);
    let first = l.done(&j);
    l.done(&j);
    let rule = keep(&j, Some(1), t(-10));
    assert!(matches!(
        l.store.prune_batch(&rule, 0, false, leader + 1),
        Err(StoreError::Refused(Refusal::Fenced { .. }))
    ));
    // A dry run writes nothing, and needs no fence.
    let dry = l.store.prune_batch(&rule, 0, true, l.epoch + 1).unwrap();
    assert_eq!(dry.runs.iter().map(|r| r.id).collect::<Vec<_>>(), [first]);
    assert_eq!(dry.runs[0].job, "a");
    assert_eq!(dry.runs[0].machine_id, "m");
    assert!(dry.runs[0].log_path.ends_with(&format!("{first}.log")));
    assert_eq!(l.ids().len(), 2);
}

pub(super) fn a_pruned_log_is_recorded_once_and_never_an_owed_runs(s: &Subject) {
    let l = serve(s);
    let j = l.job("a", Concurrency::Allow);
    let done = l.done(&j);
    let owed = l.interrupted(&j);
    let queued = l.queue(&j);
    let states = l.store.log_states(&[done, owed, queued, 999_999]).unwrap();
    let flags: Vec<_> = states
        .iter()
        .map(|s| (s.id, s.protected, s.log_pruned, s.ended_at.is_some()))
        .collect();
    assert_eq!(
        flags,
        [
            (done, false, false, true),
            (owed, true, false, true),
            (queued, true, false, false)
        ]
    );
    assert_eq!(
        l.store
            .mark_logs_pruned(&[done, owed, queued], t(50), l.epoch)
            .unwrap(),
        [done]
    );
    assert!(
        l.store
            .mark_logs_pruned(&[done], t(60), l.epoch)
            .unwrap()
            .is_empty()
    );
    let run = l.store.run_get(done).unwrap().unwrap();
    assert_eq!(
        run.log_pruned_at.as_deref(),
        Some("2027-01-15T08:00:50.000Z")
    );
    assert_eq!(l.store.run_get(owed).unwrap().unwrap().log_pruned_at, None);
    assert!(l.store.log_states(&[done]).unwrap()[0].log_pruned);
    assert!(matches!(
        l.store.mark_logs_pruned(&[done], t(60), l.epoch + 1),
        Err(StoreError::Refused(Refusal::Fenced { .. }))
    ));
    // Giving space back is safe at any time.
    l.store.reclaim(100).unwrap();
}
