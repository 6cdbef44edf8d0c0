// load.js — how data reaches the page: refetching parts of it (calls in one task coalesced,
// an answer older than one already applied dropped), applying each answer to the state and
// its panels, applying a run or a job from an event or an action, the refetches the clock
// alone calls for (readiness edges, pauses ending, hosts' heartbeats, notifiers' deliveries),
// and batching the renders a burst of runs causes.

import { api, enc, showError } from "./api.js";
import { PAGE, isActive, isShared, mergeRuns, nextPauseEnd, state, upsertRun } from "./model.js";
import { parseDuration } from "./time.js";
import { renderStatus } from "./status.js";
import { renderJobs } from "./jobs.js";
import { renderRuns } from "./runs.js";
import { renderHolds, renderServices } from "./services.js";
import { renderHosts } from "./hosts.js";
import { renderNotifiers, renderQueues } from "./queues.js";
import { renderDetails } from "./details.js";
import { scheduleTimeline } from "./timeline.js";
import { logRunChanged } from "./log.js";

const HOSTS_AFTER_RUNS_MS = 5000; // run events refetch the hosts (runs in flight) at most this often
const HOSTS_HEARTBEAT_MS = 10000; // and the tick refetches them this often (heartbeats, lost hosts)
const NOTIFIERS_PENDING_MS = 10000; // the tick refetches notifiers this often while events are pending
const PAUSE_END_SLACK_MS = 1000; // a pause's end is refetched this long after it, for the server's clock

const pendingParts = new Set();
const partSeq = {};
const appliedSeq = {};

/** Asks for parts of the data to be refetched; calls in the same task are coalesced. */
export function refresh(parts) {
  if (state.conn === "unauthorized") return;
  const empty = pendingParts.size === 0;
  for (const p of parts) pendingParts.add(p);
  if (empty) queueMicrotask(flushRefresh);
}

export function loadAll() {
  refresh(["status", "jobs", "runs", "services", "holds", "readiness", "hosts", "queues", "notifiers", "sleeps"]);
}

function flushRefresh() {
  const parts = new Set(pendingParts);
  pendingParts.clear();
  const simple = {
    status: ["/api/status", (s) => { state.status = s; renderStatus(); }],
    jobs: ["/api/jobs", applyJobs],
    runs: [`/api/runs?limit=${PAGE}`, (runs) => { mergeRuns(runs, false); renderRuns(); renderJobs(); selectedChanged(); }],
    holds: ["/api/holds", (holds) => { state.holds = holds; renderHolds(); }],
    hosts: ["/api/hosts", applyHosts],
    queues: ["/api/queues", (queues) => { state.queues = queues; renderQueues(); }],
    notifiers: ["/api/notifiers", (notifiers) => { state.notifiers = notifiers; renderNotifiers(); }],
    sleeps: ["/api/sleeps", (sleeps) => { state.sleeps = sleeps; scheduleTimeline(); }],
  };
  if (parts.has("hosts")) {
    state.hostsAskedAt = Date.now();
    state.hostsDue = false;
  }
  if (parts.has("notifiers")) state.notifiersAskedAt = Date.now();
  for (const [part, [path, apply]] of Object.entries(simple)) {
    if (parts.has(part)) fetchPart(part, path, apply);
  }
  if (parts.has("services")) {
    fetchPart("services", "/api/services", (services) => {
      state.services = services;
      renderServices();
      loadReadiness();
    });
  } else if (parts.has("readiness")) {
    loadReadiness();
  }
}

/** Fetches one part; an answer older than one already applied is dropped. */
async function fetchPart(part, path, apply) {
  const seq = (partSeq[part] = (partSeq[part] || 0) + 1);
  try {
    const data = await api(path);
    if (seq < (appliedSeq[part] || 0)) return;
    appliedSeq[part] = seq;
    state.loaded.add(part);
    apply(data);
  } catch (err) {
    showError(`Could not load ${path}`, err);
  }
}

function loadReadiness() {
  const names = new Set(state.services.map((s) => s.name));
  for (const name of state.readiness.keys()) if (!names.has(name)) state.readiness.delete(name);
  for (const name of names) {
    fetchPart(`readiness:${name}`, `/api/readiness?service=${enc(name)}`, (data) => {
      state.readiness.set(name, { data, nextChange: nextClockChange(name, data) });
      renderServices();
    });
  }
}

/** When readiness would next change by the clock alone: a fire entering the window, a hold expiring. */
function nextClockChange(service, r) {
  const now = Date.now();
  const windowMs = parseDuration(r.window) || 90000;
  const times = [];
  for (const b of r.blockers) {
    if (b.kind === "hold") times.push(Date.parse(b.expires_at));
  }
  for (const job of state.jobs) {
    if (job.enabled === false || !job.next_fire_at || !dependsOn(job, service)) continue;
    times.push(Date.parse(job.next_fire_at) - windowMs);
  }
  const future = times.filter((t) => t > now);
  return future.length ? Math.min(...future) : null;
}

function dependsOn(job, service) {
  return service === "stead" || (job.depends_on || []).includes(service);
}

function applyJobs(jobs) {
  state.jobs = jobs;
  renderJobs();
  renderRuns();
  rearmClock();
}

/** A job action's answer: show the job at once (the change event's refetch follows). */
export function applyJob(job) {
  applyJobs(state.jobs.map((j) => (j.name === job.name ? job : j)));
  refresh(["readiness"]);
}

function rearmClock() {
  for (const [name, entry] of state.readiness) entry.nextChange = nextClockChange(name, entry.data);
  state.pauseEnd = nextPauseEnd(state.jobs, Date.now());
}

/**
 * From the 1 s tick: once the clock crosses a readiness edge, refetch holds and readiness;
 * once a pause has ended by itself (which no event tells), refetch the jobs.
 */
export function clockCrossings(now) {
  let due = false;
  for (const entry of state.readiness.values()) {
    if (entry.nextChange !== null && entry.nextChange <= now) {
      entry.nextChange = null;
      due = true;
    }
  }
  if (due) refresh(["holds", "readiness"]);
  if (state.pauseEnd !== null && state.pauseEnd + PAUSE_END_SLACK_MS <= now) {
    state.pauseEnd = null;
    refresh(["jobs"]);
  }
}

/** From the 1 s tick: while a notifier has events pending, refetch them every 10 s (deliveries send no event). */
export function notifiersTick(now) {
  if (state.conn !== "live" || document.hidden || !state.notifiers.some((n) => n.pending > 0)) return;
  if (now - state.notifiersAskedAt >= NOTIFIERS_PENDING_MS) refresh(["notifiers"]);
}

function applyHosts(data) {
  state.hosts = data;
  renderHosts();
  const sig = JSON.stringify([data.shared, data.hosts.map((x) => [x.machine_id, x.name, x.state])]);
  if (sig === state.hostsSig) return;
  state.hostsSig = sig; // names or states changed: the runs' host cells with them
  renderRuns();
  if (state.runs.has(state.selectedId)) renderDetails();
}

/** A run changed: hosts' runs in flight may have too. Refetch them, at most once per 5 s (the tick catches up). */
function hostsAfterRun() {
  if (!isShared()) return;
  state.hostsDue = true;
  hostsTick(Date.now());
}

/** From the 1 s tick: refetch the hosts when runs changed (at most every 5 s) or, for their heartbeats, every 10 s. */
export function hostsTick(now) {
  if (!isShared() || state.conn !== "live") return;
  const since = now - state.hostsAskedAt;
  if ((state.hostsDue && since >= HOSTS_AFTER_RUNS_MS) || (since >= HOSTS_HEARTBEAT_MS && !document.hidden)) {
    refresh(["hosts"]);
  }
}

/** A run event (or an action's answer): upsert by id and refresh what depends on it. */
export function applyRun(run) {
  const change = upsertRun(run);
  if (!change) return;
  scheduleRender();
  if (change.fresh) refresh(["jobs", "readiness"]); // a fire moves next_fire_at; a run may block a restart
  else if (change.statusChanged) refresh(["readiness"]);
  const moved = change.fresh || change.statusChanged;
  if (run.queue && (moved || change.waitingChanged)) refresh(["queues"]); // its runs going and waiting
  if (moved && !isActive(run)) refresh(["notifiers"]); // an end may be an event to deliver
  if (moved || change.hostChanged) hostsAfterRun();
  if (run.id === state.selectedId) selectedChanged();
}

function selectedChanged() {
  if (!state.runs.has(state.selectedId)) return;
  renderDetails();
  logRunChanged();
}

let renderQueued = false;
/** Renders the runs and jobs once, after the current task (a burst of run events draws once). */
export function scheduleRender() {
  if (renderQueued) return;
  renderQueued = true;
  queueMicrotask(() => {
    renderQueued = false;
    renderRuns();
    renderJobs();
  });
}
