//! The contract of checkpoints and steps: kept by idempotency key, seen by a run's
//! resume and retries, written only by the run holding the key with its own token,
//! bounded, and pruned with the last run of their key (and only then).

use stead_core::run_token::RUN_TOKEN_VAR;
use stead_protocol::checkpoint::{MAX_CHECKPOINT_KEYS, MAX_CHECKPOINT_VALUE_BYTES, MAX_STEPS};

use super::*;
use crate::KeepRule;

impl Server<'_> {
    /// Run `id`'s own token, as its plan gives it to the command.
    fn token(&self, id: i64) -> String {
        let plan = self
            .store
            .run_plan(id)
            .unwrap()
            .expect("the run has a plan");
        plan.env[RUN_TOKEN_VAR].clone()
    }

    /// An on-demand run of `job`, marked running; its id and token.
    fn running(&self, job: &StoredJob) -> (i64, String) {
        let id = self.queue(job);
        assert!(self.store.mark_running(id, 1, &me(), now()).unwrap());
        (id, self.token(id))
    }

    /// The resume of cut run `parent`, under its key as the resumer admits it.
    fn resume(&self, job: &StoredJob, parent: i64) -> i64 {
        let key = self.store.run_get(parent).unwrap().unwrap().idempotency_key;
        let new = NewRun {
            idempotency_key: Some(key),
            ..resume_of(job, parent, None)
        };
        self.admit(&new).unwrap().run.id
    }

    fn value(&self, id: i64, key: &str) -> Option<String> {
        self.store.checkpoint_get(id, key).unwrap().map(|c| c.value)
    }
}

fn refusal<T: std::fmt::Debug>(r: Result<T, StoreError>) -> Refusal {
    match r {
        Err(StoreError::Refused(refusal)) => refusal,
        other => panic!("expected a refusal, got {other:?}"),
    }
}

pub(super) fn a_resume_sees_what_its_cut_attempt_recorded_and_the_cut_one_writes_nothing(
    s: &Subject,
) {
    let l = serve(s);
    let j = l.job("a", Concurrency::Allow);
    let (a, token_a) = l.running(&j);
    let set = l
        .store
        .checkpoint_set(a, &token_a, "draft", "v1", t(1))
        .unwrap();
    assert_eq!((set.run_id, set.value.as_str()), (a, "v1"));
    assert_eq!(l.store.step_begin(a, &token_a, "fetch").unwrap(), None);
    let fetched = l.store.step_done(a, &token_a, "fetch", t(2)).unwrap();
    assert_eq!((fetched.run_id, fetched.attempt), (a, 1));

    // Cut: the run ended, and its command, still alive somewhere, writes nothing more.
    assert!(l.store.run_settle(a, &cut("cut"), l.epoch).unwrap());
    assert_eq!(
        refusal(l.store.checkpoint_set(a, &token_a, "draft", "late", t(3))),
        Refusal::NotKeyHolder {
            run: a,
            holder: None
        }
    );
    let b = l.resume(&j, a);
    assert!(l.store.mark_running(b, 1, &me(), now()).unwrap());
    assert_eq!(
        refusal(l.store.checkpoint_set(a, &token_a, "draft", "late", t(3))),
        Refusal::NotKeyHolder {
            run: a,
            holder: Some(b)
        }
    );
    assert_eq!(
        refusal(l.store.step_done(a, &token_a, "upload", t(3))),
        Refusal::NotKeyHolder {
            run: a,
            holder: Some(b)
        }
    );

    // The resume sees the checkpoint and the completed step, and writes with its own
    // token only.
    let token_b = l.token(b);
    assert_ne!(token_a, token_b);
    assert_eq!(l.value(b, "draft").as_deref(), Some("v1"));
    assert_eq!(
        l.store.step_begin(b, &token_b, "fetch").unwrap(),
        Some(fetched.clone())
    );
    assert_eq!(
        refusal(l.store.checkpoint_set(b, &token_a, "draft", "v2", t(4))),
        Refusal::WrongRunToken(b)
    );
    l.store
        .checkpoint_set(b, &token_b, "draft", "v2", t(4))
        .unwrap();
    // Completing a completed step keeps its first completion.
    assert_eq!(
        l.store.step_done(b, &token_b, "fetch", t(5)).unwrap(),
        fetched
    );
    let upload = l.store.step_done(b, &token_b, "upload", t(6)).unwrap();
    assert_eq!((upload.run_id, upload.attempt), (b, 2));

    let all = l.store.checkpoints_of(a).unwrap();
    assert_eq!(
        all,
        l.store
            .checkpoints_of(b)
            .map(|c| Checkpoints { run_id: a, ..c })
            .unwrap()
    );
    assert_eq!(
        all.checkpoints
            .iter()
            .map(|c| (c.key.as_str(), c.value.as_str(), c.run_id))
            .collect::<Vec<_>>(),
        [("draft", "v2", b)]
    );
    assert_eq!(
        all.steps
            .iter()
            .map(|s| s.name.as_str())
            .collect::<Vec<_>>(),
        ["fetch", "upload"]
    );

    // The job's next run has a key of its own, and starts empty.
    let (c, _) = l.running(&j);
    assert_eq!(l.value(c, "draft"), None);
    let fresh = l.store.checkpoints_of(c).unwrap();
    assert!(fresh.checkpoints.is_empty() && fresh.steps.is_empty());
}

pub(super) fn a_retry_sees_the_failed_attempts_checkpoints(s: &Subject) {
    let l = serve(s);
    let spec = JobSpec {
        retries: 1,
        retry_delay: Some("10s".into()),
        ..spec("a", Concurrency::Forbid)
    };
    let j = l.store.job_insert(&spec, now(), l.epoch).unwrap();
    let first = l
        .store
        .run_admit(
            &new_run(&j, Trigger::OnDemand, None),
            &j.spec,
            &planner(),
            l.epoch,
        )
        .unwrap()
        .run
        .id;
    assert!(l.store.mark_running(first, 1, &me(), now()).unwrap());
    let token_first = l.token(first);
    l.store
        .step_done(first, &token_first, "step1", t(1))
        .unwrap();
    assert!(l.store.finish(first, &RunEnd::exited(2, t(5))).unwrap());
    let retry = l
        .store
        .run_get(first)
        .unwrap()
        .unwrap()
        .followed_by
        .unwrap();
    let token_retry = l.token(retry);
    assert_ne!(
        token_first, token_retry,
        "each attempt has a token of its own"
    );
    assert!(
        l.store
            .step_begin(retry, &token_retry, "step1")
            .unwrap()
            .is_some()
    );
    assert_eq!(
        l.store.step_begin(retry, &token_retry, "step2").unwrap(),
        None
    );
    assert_eq!(
        refusal(l.store.step_done(first, &token_first, "step2", t(6))),
        Refusal::NotKeyHolder {
            run: first,
            holder: Some(retry)
        }
    );
}

pub(super) fn bad_names_unknown_runs_and_limits_are_refused_writing_nothing(s: &Subject) {
    let l = serve(s);
    let j = l.job("a", Concurrency::Allow);
    let (a, token) = l.running(&j);
    assert_eq!(
        refusal(l.store.checkpoint_set(999, &token, "k", "v", t(1))),
        Refusal::NoSuchRun(999)
    );
    assert_eq!(
        refusal(l.store.checkpoint_get(999, "k")),
        Refusal::NoSuchRun(999)
    );
    assert!(matches!(
        refusal(l.store.checkpoint_set(a, &token, "no spaces", "v", t(1))),
        Refusal::CheckpointName { .. }
    ));
    let big = "x".repeat(MAX_CHECKPOINT_VALUE_BYTES + 1);
    let Refusal::CheckpointLimit(why) = refusal(l.store.checkpoint_set(a, &token, "k", &big, t(1)))
    else {
        panic!("expected a limit");
    };
    assert!(why.contains("65536 bytes"), "{why}");
    l.store
        .checkpoint_set(a, &token, "k", &big[1..], t(1))
        .expect("a value of exactly the limit is kept");

    for i in 1..MAX_CHECKPOINT_KEYS {
        l.store
            .checkpoint_set(a, &token, &format!("k{i}"), "v", t(1))
            .unwrap();
    }
    let Refusal::CheckpointLimit(why) =
        refusal(l.store.checkpoint_set(a, &token, "one-more", "v", t(1)))
    else {
        panic!("expected a limit");
    };
    assert!(why.contains("1000 checkpoint keys"), "{why}");
    assert_eq!(l.value(a, "one-more"), None);
    // A key already there may still change.
    l.store
        .checkpoint_set(a, &token, "k1", "changed", t(2))
        .unwrap();

    for i in 0..MAX_STEPS {
        l.store
            .step_done(a, &token, &format!("s{i}"), t(1))
            .unwrap();
    }
    let Refusal::CheckpointLimit(why) = refusal(l.store.step_done(a, &token, "one-more", t(1)))
    else {
        panic!("expected a limit");
    };
    assert!(why.contains("1000 completed steps"), "{why}");
    let all = l.store.checkpoints_of(a).unwrap();
    assert_eq!(
        (all.checkpoints.len() as u64, all.steps.len() as u64),
        (MAX_CHECKPOINT_KEYS, MAX_STEPS)
    );
}

pub(super) fn checkpoints_stay_while_a_run_of_their_key_does_and_go_with_the_last(s: &Subject) {
    let (l, leader) = lead(s);
    let j = l.job("a", Concurrency::Allow);
    let (a, token_a) = l.running(&j);
    l.store
        .checkpoint_set(a, &token_a, "session", "s-1", t(1))
        .unwrap();
    assert!(l.store.run_settle(a, &cut("cut"), l.epoch).unwrap());
    let b = l.resume(&j, a);
    assert!(l.store.mark_running(b, 1, &me(), now()).unwrap());
    assert!(l.store.finish(b, &RunEnd::exited(0, t(2))).unwrap());
    // Later runs, so that the cut run and its resume may go.
    let newer: Vec<i64> = (0..2).map(|_| l.running(&j).0).collect();
    let rule = KeepRule {
        job_id: j.id,
        keep_runs: Some(1),
        created_before: t(-3600),
    };
    // The resume goes first (its parent is kept while it stays): the key lives on in
    // the parent, and so do its checkpoints.
    let gone = l.store.prune_batch(&rule, 0, false, leader).unwrap();
    assert!(gone.runs.iter().any(|r| r.id == b), "{gone:?}");
    assert!(l.store.run_get(a).unwrap().is_some());
    assert_eq!(l.value(a, "session").as_deref(), Some("s-1"));
    assert!(newer.iter().all(|id| l.value(*id, "session").is_none()));

    // The resume gone, its parent goes at the next prune: the last run of the key, and
    // its checkpoints with it. A run given that key again finds nothing.
    let key = l.store.run_get(a).unwrap().unwrap().idempotency_key;
    let gone = l.store.prune_batch(&rule, 0, false, leader).unwrap();
    assert!(gone.runs.iter().any(|r| r.id == a), "{gone:?}");
    let again = NewRun {
        idempotency_key: Some(key),
        ..new_run(&j, Trigger::OnDemand, None)
    };
    let again = l.admit(&again).unwrap().run.id;
    assert_eq!(l.value(again, "session"), None);
}
