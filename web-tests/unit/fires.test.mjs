// Fires not run on the dashboard's timeline (model.js): each skipped row is a tick at the
// fire it stands for, not at the moment it was recorded, so 29 fires coalesced into one
// catch-up run stand apart; its title says which fire and why, naming the catch-up run or
// the pause (with its end as a local time); and which fires a pause passes over.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { pausedOver, runSpan, skippedLines } from '../../crates/stead-server/src/request/http/assets/js/model.js';

const MIN = 60 * 1000;
const woke = '2026-12-01T10:30:10.000Z';
const fire = (k) => new Date(Date.parse('2026-12-01T10:00:00.000Z') + k * MIN).toISOString();
const skippedRow = (id, k) => ({
  id,
  job: 'tick',
  status: 'skipped',
  trigger: 'catch_up',
  created_at: woke,
  ended_at: woke,
  scheduled_at: fire(k),
  reason: 'fire not run: coalesced into catch-up run 31 (catch_up = once)',
});

test('skipped rows recorded at once sit at their own fires', () => {
  const now = Date.parse(woke) + 1000;
  const at = [];
  for (let k = 1; k <= 29; k += 1) {
    const [start, end] = runSpan(skippedRow(k, k), now);
    assert.equal(start, end, 'a tick, not a bar');
    at.push(start);
  }
  assert.equal(new Set(at).size, 29, 'no two ticks on one instant');
  assert.equal(at[0], Date.parse(fire(1)));
  assert.equal(at[28], Date.parse(fire(29)));
});

test('a skipped run with no fire (an overlap on demand) sits at its creation', () => {
  const run = { ...skippedRow(5, 1), trigger: 'on_demand', scheduled_at: null };
  assert.deepEqual(runSpan(run, 0), [Date.parse(woke), Date.parse(woke)]);
});

test('runs that ran keep their start-to-end span', () => {
  const run = { id: 31, status: 'succeeded', created_at: woke, started_at: woke, ended_at: '2026-12-01T10:30:12.000Z' };
  assert.deepEqual(runSpan(run, 0), [Date.parse(woke), Date.parse('2026-12-01T10:30:12.000Z')]);
});

test('the title names the fire and the reason, with the catch-up run', () => {
  const lines = skippedLines(skippedRow(7, 7), (t) => new Date(t).toISOString());
  assert.deepEqual(lines, [
    `fire of ${fire(7)} not run`,
    'fire not run: coalesced into catch-up run 31 (catch_up = once)',
    `recorded ${woke}`,
  ]);
});

test("a fire a pause passed over: the title names the pause, its end written as the page writes times", () => {
  const until = '2026-12-01T11:00:00.000Z';
  const row = { ...skippedRow(9, 9), trigger: 'scheduled', reason: `fire not run: the job is paused until ${until}` };
  const lines = skippedLines(row, (t) => `<${new Date(t).toISOString()}>`);
  assert.deepEqual(lines, [
    `fire of <${fire(9)}> not run`,
    `fire not run: the job is paused until <${until}>`,
    `recorded <${woke}>`,
  ]);
});

test('pausedOver: the fires before the end of a pause; none of a job not paused', () => {
  const job = { name: 'tick', paused_until: '2026-12-01T11:00:00.000Z' };
  assert.equal(pausedOver(job, Date.parse('2026-12-01T10:59:59.000Z')), true);
  assert.equal(pausedOver(job, Date.parse('2026-12-01T11:00:00.000Z')), false, 'the fire at its end runs');
  assert.equal(pausedOver({ name: 'tick' }, 0), false);
  assert.equal(pausedOver(undefined, 0), false, 'a removed job');
});
