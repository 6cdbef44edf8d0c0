// The dashboard's time text (time.js): spans, relative times, durations, leases, parsed
// durations, which absolute format a time gets, and the times within the server's words. Only the words stead writes itself are
// asserted; absolute times are compared with Intl in the same locale and zone, never with a
// fixed string, so the test holds on any machine.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  absText,
  durText,
  leaseText,
  localTimes,
  parseDuration,
  relText,
  span,
  splitTimes,
} from '../../crates/stead-server/src/request/http/assets/js/time.js';

const S = 1000;
const MIN = 60 * S;
const H = 60 * MIN;
const D = 24 * H;

test('span: seconds, minutes, hours and minutes, days and hours', () => {
  const cases = [
    [0, '0 s'],
    [999, '0 s'],
    [59 * S + 999, '59 s'],
    [MIN, '1 min'],
    [59 * MIN + 59 * S, '59 min'],
    [H, '1 h'],
    [2 * H + 5 * MIN + 30 * S, '2 h 5 min'],
    [23 * H + 59 * MIN, '23 h 59 min'],
    [D, '1 d'],
    [3 * D + 4 * H + 59 * MIN, '3 d 4 h'],
  ];
  for (const [ms, want] of cases) assert.equal(span(ms), want, `${ms} ms`);
});

test('relText: "now" within a second, "in …" ahead, "… ago" behind', () => {
  const now = 1_700_000_000_000;
  assert.equal(relText(now, now), 'now');
  assert.equal(relText(now + 999, now), 'now');
  assert.equal(relText(now - 999, now), 'now');
  assert.equal(relText(now + 1000, now), 'in 1 s');
  assert.equal(relText(now - 5 * S, now), '5 s ago');
  assert.equal(relText(now + 59 * MIN + 30 * S, now), 'in 59 min');
  assert.equal(relText(now - (H + 30 * MIN), now), '1 h 30 min ago');
  assert.equal(relText(now + 2 * D + H, now), 'in 2 d 1 h');
});

test('durText: tenths under 10 s for ended runs, whole seconds for live ones', () => {
  assert.equal(durText(0, false), '0.0 s');
  assert.equal(durText(306, false), '0.3 s');
  assert.equal(durText(1234, false), '1.2 s');
  assert.equal(durText(1234, true), '1 s');
  assert.equal(durText(10 * S, false), '10 s');
  assert.equal(durText(59 * S + 900, false), '59 s');
  assert.equal(durText(MIN + 5 * S, true), '1 min 5 s');
  assert.equal(durText(59 * MIN + 59 * S, false), '59 min 59 s');
  assert.equal(durText(H + 2 * MIN + 3 * S, false), '1 h 2 min');
  assert.equal(durText(26 * H, true), '26 h 0 min');
});

test('durText: a negative duration (clocks apart) reads as zero', () => {
  assert.equal(durText(-5000, false), '0.0 s');
  assert.equal(durText(-5000, true), '0 s');
});

test('leaseText: ahead, or behind while the server is live or not', () => {
  const now = 1_700_000_000_000;
  assert.equal(leaseText(now + 40 * S, now, true), 'in 40 s');
  assert.equal(leaseText(now + 40 * S, now, false), 'in 40 s');
  assert.equal(leaseText(now - 3 * S, now, true), 'renewed by the heartbeat (server live)');
  assert.equal(leaseText(now - 3 * S, now, false), '3 s ago');
  assert.equal(leaseText(now - 2 * H, now, false), '2 h ago');
});

test('parseDuration: units d, h, m, s, combined, spaced; nothing else counts', () => {
  assert.equal(parseDuration('90s'), 90 * S);
  assert.equal(parseDuration('1h30m'), H + 30 * MIN);
  assert.equal(parseDuration('1h 30m'), H + 30 * MIN);
  assert.equal(parseDuration('2 d'), 2 * D);
  assert.equal(parseDuration('1d2h3m4s'), D + 2 * H + 3 * MIN + 4 * S);
  assert.equal(parseDuration('5m'), 5 * MIN);
  assert.equal(parseDuration(''), 0);
  assert.equal(parseDuration(null), 0);
  assert.equal(parseDuration(undefined), 0);
  assert.equal(parseDuration('soon'), 0);
  assert.equal(parseDuration('15'), 0);
});

test('absText: the time of day today, the day this year, the full date another year', () => {
  // Local dates, so the day and the year are the same ones in any time zone.
  const now = new Date(2026, 6, 15, 12, 0, 0).getTime();
  const today = new Date(2026, 6, 15, 8, 5, 9).getTime();
  const thisYear = new Date(2026, 2, 3, 8, 5, 9).getTime();
  const lastYear = new Date(2025, 11, 31, 23, 59, 59).getTime();
  const fmt = (opts, t) => new Intl.DateTimeFormat(undefined, opts).format(t);
  assert.equal(absText(today, now), fmt({ hour: '2-digit', minute: '2-digit', second: '2-digit' }, today));
  assert.equal(
    absText(thisYear, now),
    fmt({ month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit', second: '2-digit' }, thisYear),
  );
  assert.equal(absText(lastYear, now), fmt({ dateStyle: 'medium', timeStyle: 'medium' }, lastYear));
  // The three are told apart: the same time of day on another day says more.
  assert.notEqual(absText(today, now), absText(thisYear, now));
  assert.notEqual(absText(thisYear, now), absText(new Date(2025, 2, 3, 8, 5, 9).getTime(), now));
});

test('splitTimes: the RFC 3339 times within words, as the server writes them', () => {
  assert.deepEqual(splitTimes('its retry delay, until 2026-12-02T06:21:54.905Z'), [
    'its retry delay, until ',
    { iso: '2026-12-02T06:21:54.905Z' },
  ]);
  assert.deepEqual(
    splitTimes('its retry delay, until 2026-12-02T06:21:54Z, then a place in queue gpu'),
    ['its retry delay, until ', { iso: '2026-12-02T06:21:54Z' }, ', then a place in queue gpu'],
  );
  assert.deepEqual(splitTimes('2026-12-02T06:21:54+01:00 and 2026-12-03T00:00:00.000Z'), [
    { iso: '2026-12-02T06:21:54+01:00' },
    ' and ',
    { iso: '2026-12-03T00:00:00.000Z' },
  ]);
  assert.deepEqual(splitTimes('a place in queue gpu'), ['a place in queue gpu']);
  assert.deepEqual(splitTimes(''), []);
  // A date alone, or a run number, is not a time.
  assert.deepEqual(splitTimes('coalesced into catch-up run 2026 on 2026-12-02'), ['coalesced into catch-up run 2026 on 2026-12-02']);
});

test('localTimes: each time written by the function given, the words kept', () => {
  const iso = (t) => new Date(t).toISOString();
  assert.equal(
    localTimes('fire not run: the job is paused until 2026-12-02T07:00:00.000Z', (t) => `<${iso(t)}>`),
    'fire not run: the job is paused until <2026-12-02T07:00:00.000Z>',
  );
  const t = Date.parse('2026-12-02T07:00:00.000Z');
  assert.equal(localTimes('until 2026-12-02T07:00:00.000Z'), `until ${absText(t)}`, 'absText by default');
});
