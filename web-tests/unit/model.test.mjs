// The dashboard's run model (model.js): a run never goes back, upserts say what changed,
// pages of runs merge with the paging cursor, the loaded runs' order and filters, and when
// the jobs' pauses end.

import { beforeEach, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  PAGE,
  latestRunByJob,
  matchesFilter,
  mergeRuns,
  nextPauseEnd,
  oldestFirst,
  oldestRun,
  progress,
  runsNewestFirst,
  state,
  storeRun,
  upsertRun,
} from '../../crates/stead-server/src/request/http/assets/js/model.js';

const run = (id, status, more = {}) => ({ id, job: 'job', status, ...more });
const ids = (runs) => runs.map((r) => r.id);

beforeEach(() => {
  state.runs.clear();
  state.pagedOldest = null;
  state.pagedDeep = false;
  state.hasOlder = false;
  state.filter = { job: '', status: '' };
});

test('progress: queued, then running, then ended; a resolution is further still', () => {
  const order = [
    run(1, 'queued'),
    run(1, 'running'),
    run(1, 'interrupted'),
    run(1, 'interrupted', { resolution: 'resumed as run 2' }),
  ];
  for (let i = 1; i < order.length; i += 1) {
    assert.ok(progress(order[i]) > progress(order[i - 1]), `${order[i].status} after ${order[i - 1].status}`);
  }
  for (const status of ['succeeded', 'failed', 'cancelled', 'skipped', 'interrupted']) {
    assert.equal(progress(run(1, status)), progress(run(1, 'succeeded')), status);
  }
});

test('storeRun: a run moves forward, never back', () => {
  assert.equal(storeRun(run(1, 'queued')), true);
  assert.equal(storeRun(run(1, 'running')), true);
  assert.equal(state.runs.get(1).status, 'running');
  assert.equal(storeRun(run(1, 'succeeded', { exit_code: 0 })), true);
  // A late answer from before the end must not undo it.
  assert.equal(storeRun(run(1, 'running')), false);
  assert.equal(storeRun(run(1, 'queued')), false);
  assert.equal(state.runs.get(1).status, 'succeeded');
  assert.equal(state.runs.get(1).exit_code, 0);
});

test('storeRun: a row as far along replaces the stored one (a newer copy)', () => {
  storeRun(run(1, 'interrupted'));
  assert.equal(storeRun(run(1, 'interrupted', { reason: 'reboot' })), true);
  assert.equal(state.runs.get(1).reason, 'reboot');
  storeRun(run(1, 'interrupted', { resolution: 'resumed as run 2' }));
  assert.equal(storeRun(run(1, 'interrupted')), false, 'a settled debt stays settled');
  assert.equal(state.runs.get(1).resolution, 'resumed as run 2');
});

test('storeRun: a failed run once retried stays so (followed_by comes later)', () => {
  storeRun(run(1, 'failed'));
  assert.equal(storeRun(run(1, 'failed', { followed_by: 2 })), true);
  assert.equal(storeRun(run(1, 'failed')), false, 'a copy read before its retry existed');
  assert.equal(state.runs.get(1).followed_by, 2);
});

test('upsertRun: says whether the run is new, and what changed', () => {
  const none = { fresh: false, statusChanged: false, hostChanged: false, waitingChanged: false };
  assert.deepEqual(upsertRun(run(5, 'queued', { waiting: 'a place in queue q' })), { ...none, fresh: true });
  assert.deepEqual(upsertRun(run(5, 'queued', { waiting: 'a place in queue q' })), none);
  assert.deepEqual(upsertRun(run(5, 'queued')), { ...none, waitingChanged: true });
  assert.deepEqual(upsertRun(run(5, 'queued', { machine_id: 'm1' })), { ...none, hostChanged: true });
  assert.deepEqual(upsertRun(run(5, 'running', { machine_id: 'm1' })), { ...none, statusChanged: true });
  assert.equal(upsertRun(run(5, 'queued')), null, 'going back is refused');
  assert.equal(state.runs.get(5).status, 'running');
  assert.equal(state.runs.get(5).machine_id, 'm1');
});

test('mergeRuns: the newest page stores its runs and sets the paging cursor', () => {
  mergeRuns([run(12, 'running'), run(11, 'succeeded'), run(10, 'failed')], false);
  assert.deepEqual(ids(runsNewestFirst()), [12, 11, 10]);
  assert.equal(state.pagedOldest, 10);
  assert.equal(state.hasOlder, false, 'a short page is the last one');
  assert.equal(state.pagedDeep, false);
});

test('mergeRuns: a full page says older runs remain; an older page moves the cursor', () => {
  const page = (from) => Array.from({ length: PAGE }, (_, i) => run(from - i, 'succeeded'));
  mergeRuns(page(1000), false);
  assert.equal(state.hasOlder, true);
  assert.equal(state.pagedOldest, 1000 - PAGE + 1);
  mergeRuns([run(700, 'succeeded'), run(699, 'failed')], true);
  assert.equal(state.pagedOldest, 699);
  assert.equal(state.hasOlder, false, 'the older page was short: nothing older');
  assert.equal(state.pagedDeep, true);
  assert.equal(state.runs.size, PAGE + 2);
});

test('mergeRuns: once paged deeper, a refetch of the newest page keeps what paging found', () => {
  mergeRuns([run(3, 'succeeded')], false);
  mergeRuns([run(2, 'succeeded'), run(1, 'succeeded')], true);
  assert.equal(state.hasOlder, false);
  const full = Array.from({ length: PAGE }, (_, i) => run(1000 - i, 'succeeded'));
  mergeRuns(full, false);
  assert.equal(state.hasOlder, false, 'the newest page being full says nothing about the oldest');
  assert.equal(state.pagedOldest, 1, 'the cursor never moves back up');
});

test('mergeRuns: an empty page leaves the cursor; a page never undoes a newer event', () => {
  mergeRuns([], false);
  assert.equal(state.pagedOldest, null);
  upsertRun(run(4, 'succeeded', { exit_code: 0 }));
  mergeRuns([run(4, 'running'), run(3, 'queued')], false);
  assert.equal(state.runs.get(4).status, 'succeeded');
  assert.equal(state.runs.get(3).status, 'queued');
  assert.equal(state.pagedOldest, 3);
});

test('runsNewestFirst, oldestFirst and oldestRun order by id, not by arrival', () => {
  for (const id of [7, 2, 9, 4]) storeRun(run(id, 'succeeded'));
  assert.deepEqual(ids(runsNewestFirst()), [9, 7, 4, 2]);
  assert.deepEqual(ids([...state.runs.values()].sort(oldestFirst)), [2, 4, 7, 9]);
  assert.equal(oldestRun().id, 2);
  state.runs.clear();
  assert.equal(oldestRun(), null);
});

test("latestRunByJob: each job's run with the highest id", () => {
  storeRun(run(3, 'succeeded', { job: 'a' }));
  storeRun(run(8, 'running', { job: 'b' }));
  storeRun(run(5, 'failed', { job: 'a' }));
  storeRun(run(1, 'succeeded', { job: 'b' }));
  const last = latestRunByJob();
  assert.equal(last.get('a').id, 5);
  assert.equal(last.get('b').id, 8);
  assert.equal(last.size, 2);
});

test('matchesFilter: by job, by status, by both, or all', () => {
  const a = run(1, 'failed', { job: 'a' });
  const b = run(2, 'succeeded', { job: 'b' });
  assert.ok(matchesFilter(a) && matchesFilter(b));
  state.filter = { job: 'a', status: '' };
  assert.ok(matchesFilter(a) && !matchesFilter(b));
  state.filter = { job: '', status: 'succeeded' };
  assert.ok(!matchesFilter(a) && matchesFilter(b));
  state.filter = { job: 'a', status: 'succeeded' };
  assert.ok(!matchesFilter(a) && !matchesFilter(b));
});

test('nextPauseEnd: the first pause to end after now; none when no job is paused ahead', () => {
  const now = Date.parse('2026-12-02T06:00:00.000Z');
  const jobs = [
    { name: 'a' },
    { name: 'b', paused_until: '2026-12-02T08:00:00.000Z' },
    { name: 'c', paused_until: '2026-12-02T07:00:00.000Z' },
    { name: 'd', paused_until: '2026-12-02T05:00:00.000Z' },
  ];
  assert.equal(nextPauseEnd(jobs, now), Date.parse('2026-12-02T07:00:00.000Z'));
  assert.equal(nextPauseEnd(jobs.slice(0, 1), now), null);
  assert.equal(nextPauseEnd([jobs[3]], now), null, 'a pause already over is not waited for');
});
