// model.js — the page's one shared state, and what it knows about runs: how far a run has
// got, storing a run so that it never goes back, merging pages of runs, upserting a run from
// an event, ordering and filtering the loaded runs; and when the jobs' pauses end. Pure: no
// DOM, so node can import it.

import { localTimes } from "./time.js";

/** Runs per page of the runs list. */
export const PAGE = 200;

export const state = {
  conn: "connecting",
  status: null,
  jobs: [],
  runs: new Map(), // id -> Run
  pagedOldest: null, // smallest id fetched by the runs list (the paging cursor)
  pagedDeep: false, // "load older" has been used
  hasOlder: false,
  services: [],
  holds: [],
  readiness: new Map(), // service -> { data, nextChange }
  hosts: null, // HostsResult, once loaded
  hostsAskedAt: 0, // when the hosts were last asked for (ms)
  hostsDue: false, // a run changed since: the hosts' runs in flight may have too
  hostsSig: "", // what the runs' host cells depend on, to redraw them only when it changes
  queues: [],
  notifiers: [],
  sleeps: [], // the sleeps the machines woke from, newest first (GET /api/sleeps)
  notifiersAskedAt: 0, // when the notifiers were last asked for (ms)
  pauseEnd: null, // when the first pause ends by itself (ms), or null
  loaded: new Set(), // the parts ("jobs", "runs", …) an answer has been applied for
  selectedId: null,
  filter: { job: "", status: "" },
  tlWindow: "1h", // the timeline's window: a key of TL_WINDOWS
};

export const isActive = (run) => run.status === "queued" || run.status === "running";

/**
 * Where a run sits in time: from its start (or creation) to its end, or `now` while it is
 * live. A skipped row is an instant: the fire it stands for (its scheduled time), so the
 * fires a sleep passed over stand apart as they fell; an on-demand one at its creation.
 */
export function runSpan(run, now) {
  const created = Date.parse(run.created_at);
  if (run.status === "skipped") {
    const at = run.scheduled_at ? Date.parse(run.scheduled_at) : created;
    return [at, at];
  }
  const start = run.started_at ? Date.parse(run.started_at) : created;
  if (run.ended_at) return [start, Date.parse(run.ended_at)];
  return [start, isActive(run) ? now : start];
}

/**
 * A skipped row's title lines: which fire was not run, and why (a fire coalesced into a
 * catch-up run names that run). `timeText` writes a time in ms.
 */
export function skippedLines(run, timeText) {
  const lines = [];
  if (run.scheduled_at) lines.push(`fire of ${timeText(Date.parse(run.scheduled_at))} not run`);
  lines.push(run.reason ? localTimes(run.reason, timeText) : "not run");
  lines.push(`recorded ${timeText(Date.parse(run.created_at))}`);
  return lines;
}

/** Closed as succeeded by its landed check after being cut. */
export const isReceipt = (run) => /^landed\b.*receipt/i.test(run.resolution || "");
/** On a shared ledger (several hosts): the page shows hosts. */
export const isShared = () => Boolean(state.hosts && state.hosts.shared);

/**
 * How far a run has got; a row never goes back (a late answer must not undo a newer event).
 * Once ended, a resolution and the run that carries it on (`followed_by`) come later still.
 */
export const progress = (r) => (r.status === "queued" ? 0 : r.status === "running" ? 2 : 4)
  + (r.resolution ? 1 : 0) + (r.followed_by ? 1 : 0);

/** Stores a run by id unless the stored one has got further; answers whether it was stored. */
export function storeRun(run) {
  const prev = state.runs.get(run.id);
  if (prev && progress(prev) > progress(run)) return false;
  state.runs.set(run.id, run);
  return true;
}

/**
 * A run event (or an action's answer): stores the run as storeRun does. Answers null when it
 * was not stored, else what changed: `fresh` (a run not loaded before), `statusChanged`,
 * `hostChanged` and `waitingChanged` (what a queued run waits for; of a loaded one).
 */
export function upsertRun(run) {
  const prev = state.runs.get(run.id);
  if (!storeRun(run)) return null;
  return {
    fresh: !prev,
    statusChanged: Boolean(prev) && prev.status !== run.status,
    hostChanged: Boolean(prev) && prev.machine_id !== run.machine_id,
    waitingChanged: Boolean(prev) && prev.waiting !== run.waiting,
  };
}

/**
 * Merges a page of the runs list: the newest page (`paging` false) or an older one. Keeps
 * the paging cursor (the smallest id seen) and whether older runs remain: a full page says
 * so; a refetch of the newest page does not overrule what paging deeper found.
 */
export function mergeRuns(list, paging) {
  for (const run of list) storeRun(run);
  if (list.length) {
    const min = Math.min(...list.map((r) => r.id));
    state.pagedOldest = state.pagedOldest === null ? min : Math.min(state.pagedOldest, min);
  }
  if (paging || !state.pagedDeep) state.hasOlder = list.length === PAGE;
  if (paging) state.pagedDeep = true;
}

/** Orders runs oldest first (by id, the order they were created in). */
export const oldestFirst = (a, b) => a.id - b.id;

/** The loaded runs, newest first. */
export const runsNewestFirst = () => [...state.runs.values()].sort((a, b) => b.id - a.id);

/** The oldest loaded run, or null. */
export const oldestRun = () => [...state.runs.values()].reduce((a, r) => (!a || r.id < a.id ? r : a), null);

/** Each job's newest loaded run: job name -> Run. */
export function latestRunByJob() {
  const last = new Map();
  for (const run of state.runs.values()) {
    const cur = last.get(run.job);
    if (!cur || run.id > cur.id) last.set(run.job, run);
  }
  return last;
}

/** Whether a run passes the job and status filters. */
export function matchesFilter(run) {
  return (!state.filter.job || run.job === state.filter.job)
    && (!state.filter.status || run.status === state.filter.status);
}

/** Whether the job's pause passes over its fire at `t` (ms): the fire is then recorded skipped. */
export const pausedOver = (job, t) => Boolean(job && job.paused_until) && t < Date.parse(job.paused_until);

/** When the first of the jobs' pauses ends by itself (ms, later than `now`), or null. */
export function nextPauseEnd(jobs, now) {
  const ends = jobs.map((j) => Date.parse(j.paused_until || "")).filter((t) => t > now);
  return ends.length ? Math.min(...ends) : null;
}
