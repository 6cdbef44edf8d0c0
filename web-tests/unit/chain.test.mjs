// How the dashboard links runs into chains (chain.js): a retry to the failed run it retries,
// a resume to the cut run, an after-run to the upstream run (naming its job even when that
// run is not loaded), and a run to the one that carries it on, known from the follower's
// arrival before the parent's row says so.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { childWhat, followLink, followers, parentLink } from '../../crates/stead-server/src/request/http/assets/js/chain.js';

const run = (id, more = {}) => ({ id, job: 'job', status: 'succeeded', trigger: 'on_demand', parent_id: null, attempt: 1, ...more });
const loaded = (...runs) => new Map(runs.map((r) => [r.id, r]));

test('parentLink: a retry names the run it retries and its attempt', () => {
  const retry = run(8, { trigger: 'retry', parent_id: 3, attempt: 3, status: 'failed' });
  assert.deepEqual(parentLink(retry, loaded(retry), []), {
    id: 3,
    kind: 'retry',
    text: '↺ retry of #3',
    sub: 'attempt 3',
    title: 'retry of run 3, attempt 3',
    what: 'the failed run it retries',
  });
});

test('parentLink: a resume names the cut run and the trigger first cut', () => {
  const resume = run(5, { trigger: 'resume', parent_id: 4, original_trigger: 'scheduled' });
  const link = parentLink(resume, loaded(resume), []);
  assert.equal(link.kind, 'resume');
  assert.equal(link.text, '↻ resumes #4');
  assert.equal(link.title, 'a resume of cut run 4, first scheduled');
});

test("parentLink: an after-run names the upstream run's job, loaded or from its job's only `after`", () => {
  const up = run(6, { job: 'up' });
  const after = run(7, { job: 'down', trigger: 'after', parent_id: 6 });
  const jobs = [{ name: 'down', after: ['build'] }];
  let link = parentLink(after, loaded(up, after), jobs);
  assert.equal(link.text, 'after #6');
  assert.equal(link.sub, 'of up', 'the loaded run says which job');
  assert.equal(link.what, 'the run of up it follows');
  link = parentLink(after, loaded(after), jobs);
  assert.equal(link.sub, 'of build', 'not loaded: the job runs after one job only');
  link = parentLink(after, loaded(after), [{ name: 'down', after: ['a', 'b'] }]);
  assert.equal(link.sub, null, 'after several jobs, and the run not loaded: which one is not known');
  assert.equal(link.title, 'after run 6, on its success');
});

test('parentLink: none for a run that came from no other', () => {
  assert.equal(parentLink(run(1), loaded(), []), null);
  assert.equal(parentLink(run(2, { trigger: 'scheduled' }), loaded(), []), null);
});

test("followers and followLink: a loaded retry links its parent before the parent's row says so", () => {
  const failed = run(1, { status: 'failed' });
  const retry = run(3, { trigger: 'retry', parent_id: 1, attempt: 2, status: 'queued' });
  const after = run(2, { job: 'down', trigger: 'after', parent_id: 1 });
  const runs = loaded(failed, retry, after);
  const index = followers(runs);
  assert.deepEqual([...index], [[1, 3]], 'an after-run carries nothing on');
  assert.deepEqual(followLink(failed, index, runs), {
    id: 3,
    kind: 'retry',
    text: '→ retried as #3',
    title: 'run 3 retries it, attempt 2',
    what: 'its retry',
  });
  assert.equal(followLink(retry, index, runs), null);
});

test("followLink: the server's followed_by, of a follower not loaded, reads by how the run ended", () => {
  const index = followers(loaded());
  const failed = run(1, { status: 'failed', attempt: 1, followed_by: 9 });
  const cut = run(2, { status: 'interrupted', followed_by: 10 });
  assert.equal(followLink(failed, index, loaded(failed)).text, '→ retried as #9');
  assert.equal(followLink(failed, index, loaded(failed)).title, 'run 9 retries it, attempt 2');
  assert.equal(followLink(cut, index, loaded(cut)).text, '→ resumed as #10');
  assert.equal(followLink(cut, index, loaded(cut)).what, 'its resume');
});

test('followers: of two runs naming one parent, the first carries it on', () => {
  const runs = loaded(run(1, { status: 'interrupted' }), run(5, { trigger: 'resume', parent_id: 1 }), run(4, { trigger: 'resume', parent_id: 1 }));
  assert.equal(followers(runs).get(1), 4);
});

test('childWhat: how a run that names another as its parent relates to it', () => {
  assert.equal(childWhat(run(7, { job: 'down', trigger: 'after' })), 'of down, which runs after it');
  assert.equal(childWhat(run(8, { trigger: 'retry' })), 'which retries it');
  assert.equal(childWhat(run(9, { trigger: 'resume' })), 'which resumes it');
});
