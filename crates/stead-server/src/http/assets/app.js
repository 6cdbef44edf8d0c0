// app.js — the stead web dashboard.
//
// Reads the access token from the URL fragment (#token=…), loads jobs, runs, services,
// holds, readiness and hosts from the HTTP API, and keeps them current from the server's
// event stream (/api/events, read with fetch so it can carry the Bearer header). The only
// timer is a 1 s clock tick that refreshes relative times and running durations in place
// (and, on a shared ledger, the hosts' heartbeats and runs in flight now and then).
// Every piece of data reaches the page through textContent / createElement, never HTML.
"use strict";

const TOKEN_KEY = "stead-token";
const PAGE = 200;
const CUT_TITLE = "interrupted: cut short by something other than the run itself (a restart, a reboot, a stop). Not a failure.";
const STATUS_VIEW = {
  succeeded: { icon: "✓", label: "succeeded" }, failed: { icon: "✗", label: "failed" },
  running: { icon: "", label: "running" }, queued: { icon: "◌", label: "queued" },
  cancelled: { icon: "⊘", label: "cancelled" }, interrupted: { icon: "✂", label: "cut", title: CUT_TITLE },
  skipped: { icon: "↷", label: "skipped" },
};
const CONN_TEXT = { connecting: "Connecting…", live: "Live", reconnecting: "Reconnecting…", unauthorized: "Unauthorized" };
const HOST_STATE = {
  serving: { icon: "●", title: "serving: its server renews its lease" },
  stopped: { icon: "■", title: "stopped: its server released its lease lately" },
  lost: { icon: "⚠", title: "lost: silent for longer than a lease; its runs in flight were cut" },
};
const HOSTS_AFTER_RUNS_MS = 5000; // run events refetch the hosts (runs in flight) at most this often
const HOSTS_HEARTBEAT_MS = 10000; // and the tick refetches them this often (heartbeats, lost hosts)
const SIGNALS = { 1: "SIGHUP", 2: "SIGINT", 3: "SIGQUIT", 6: "SIGABRT", 9: "SIGKILL", 11: "SIGSEGV", 13: "SIGPIPE", 15: "SIGTERM" };

const state = {
  token: null,
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
  selectedId: null,
  filter: { job: "", status: "" },
  eventsCtrl: null,
  tlWindow: "1h", // the timeline's window: a key of TL_WINDOWS
};

// ---------------------------------------------------------------- DOM helpers

const $ = (sel) => document.querySelector(sel);

/** createElement with attributes ("text" sets textContent, "class" the class) and children. */
function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k === "text") el.textContent = String(v);
    else if (k === "class") el.className = v;
    else el.setAttribute(k, v === true ? "" : String(v));
  }
  for (const c of children.flat()) {
    if (c === null || c === undefined || c === false) continue;
    el.append(c instanceof Node ? c : String(c));
  }
  return el;
}

const tag = (text, cls, title) => h("span", { class: `tag ${cls || ""}`.trim(), text, title });
const muted = (text, title) => h("span", { class: "muted", text, title });
const code = (text) => h("code", { text });

/**
 * Keeps `parent`'s children in the order of `items`, one per key, rebuilding a child only
 * when its signature changed, so unchanged rows survive; a rebuilt row keeps the keyboard
 * focus on its button with the same data-action.
 */
function reconcile(parent, items, keyOf, sigOf, build) {
  const old = new Map();
  for (const el of parent.children) old.set(el._key, el);
  let i = 0;
  for (const item of items) {
    const key = keyOf(item);
    const sig = sigOf(item);
    let el = old.get(key);
    old.delete(key);
    if (!el || el._sig !== sig) {
      const fresh = build(item);
      fresh._key = key;
      fresh._sig = sig;
      const focused = el && el.contains(document.activeElement) ? document.activeElement.dataset.action : null;
      if (el) el.replaceWith(fresh);
      const again = focused && fresh.querySelector(`[data-action="${focused}"]`);
      if (again) again.focus();
      el = fresh;
    }
    if (parent.children[i] !== el) parent.insertBefore(el, parent.children[i] || null);
    i += 1;
  }
  for (const el of old.values()) el.remove();
}

// ---------------------------------------------------------------- time and text

const fmtTime = new Intl.DateTimeFormat(undefined, { hour: "2-digit", minute: "2-digit", second: "2-digit" });
const fmtDay = new Intl.DateTimeFormat(undefined, { month: "short", day: "numeric", hour: "2-digit", minute: "2-digit", second: "2-digit" });
const fmtYear = new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "medium" });
const fmtFull = new Intl.DateTimeFormat(undefined, { dateStyle: "full", timeStyle: "long" });

function absText(t) {
  const d = new Date(t);
  const now = new Date();
  if (d.toDateString() === now.toDateString()) return fmtTime.format(d);
  return d.getFullYear() === now.getFullYear() ? fmtDay.format(d) : fmtYear.format(d);
}

/** A span of time in words: "12 s", "3 min", "2 h 5 min", "3 d 4 h". */
function span(d) {
  const s = Math.floor(d / 1000);
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min`;
  const hr = Math.floor(m / 60);
  if (hr < 24) return m % 60 ? `${hr} h ${m % 60} min` : `${hr} h`;
  const days = Math.floor(hr / 24);
  return hr % 24 ? `${days} d ${hr % 24} h` : `${days} d`;
}

function relText(t, now = Date.now()) {
  const d = t - now;
  if (Math.abs(d) < 1000) return "now";
  return d > 0 ? `in ${span(d)}` : `${span(-d)} ago`;
}

/** A run's duration; `live` ones (still running) in whole seconds so the tick reads calmly. */
function durText(d, live) {
  d = Math.max(0, d);
  if (d < 10000 && !live) return `${(d / 1000).toFixed(1)} s`;
  const s = Math.floor(d / 1000);
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min ${s % 60} s`;
  return `${Math.floor(m / 60)} h ${m % 60} min`;
}

function leaseText(t, now = Date.now()) {
  if (t > now) return `in ${span(t - now)}`;
  return state.conn === "live" ? "renewed by the heartbeat (server live)" : `${span(now - t)} ago`;
}

/** "90s", "1h30m" → milliseconds. */
function parseDuration(text) {
  const units = { d: 86400000, h: 3600000, m: 60000, s: 1000 };
  let total = 0;
  for (const [, n, u] of String(text || "").matchAll(/(\d+)\s*([dhms])/g)) total += Number(n) * units[u];
  return total;
}

/** A <time> with the absolute local time and, updated by the tick, the relative one. */
function timeEl(iso, { abs = true, rel = true, mode = "rel" } = {}) {
  if (!iso) return muted("—");
  const t = Date.parse(iso);
  if (Number.isNaN(t)) return h("span", { text: iso });
  const el = h("time", { datetime: iso, title: `${fmtFull.format(t)}\n${iso}` });
  if (abs) el.append(h("span", { class: "abs", text: absText(t) }), " ");
  if (rel) {
    const text = mode === "lease" ? leaseText(t) : relText(t);
    el.append(h("span", { class: "rel", "data-rel": mode, "data-t": t, text }));
  }
  return el;
}

function tick() {
  const now = Date.now();
  for (const el of document.querySelectorAll("[data-rel]")) {
    const t = Number(el.dataset.t);
    let text;
    if (el.dataset.rel === "dur") text = durText(now - t, true);
    else if (el.dataset.rel === "lease") text = leaseText(t, now);
    else text = relText(t, now);
    if (el.textContent !== text) el.textContent = text;
  }
  timelineTick(now);
  clockCrossings(now);
  hostsTick(now);
}

// ---------------------------------------------------------------- API

class ApiError extends Error {
  constructor(status, code, message) { super(message); Object.assign(this, { status, code }); }
}

/** fetch with the Bearer header; a non-2xx answer throws ApiError with the server's {code, message}. */
async function request(path, opts = {}) {
  const headers = { Authorization: `Bearer ${state.token}`, ...(opts.headers || {}) };
  const res = await fetch(path, { ...opts, headers, cache: "no-store" });
  if (res.ok) return res;
  let code = `http_${res.status}`;
  let message = res.statusText || `HTTP ${res.status}`;
  const body = await res.json().catch(() => null); // not JSON: keep the status line
  if (body && body.code) [code, message] = [body.code, body.message || message];
  if (res.status === 401) unauthorized();
  throw new ApiError(res.status, code, message);
}

async function api(path, opts = {}) {
  const res = await request(path, { ...opts, headers: { Accept: "application/json" } });
  const text = await res.text();
  return text ? JSON.parse(text) : null;
}

const enc = encodeURIComponent;

// ---------------------------------------------------------------- errors, token, connection

function showError(what, err) {
  if (err && err.status === 401) return; // the unauthorized message says it
  const detail = err instanceof ApiError ? `${err.message} (${err.code})` : String((err && err.message) || err);
  const list = $("#banner-list");
  list.prepend(h("li", {}, h("strong", { text: `${what}: ` }), detail));
  while (list.children.length > 5) list.lastElementChild.remove();
  $("#banner").hidden = false;
}

function dismissErrors() {
  $("#banner-list").replaceChildren();
  $("#banner").hidden = true;
}

function readToken() {
  const fromHash = new URLSearchParams(location.hash.slice(1)).get("token");
  if (fromHash) history.replaceState(null, "", location.pathname + location.search);
  try {
    if (fromHash) sessionStorage.setItem(TOKEN_KEY, fromHash);
    return fromHash || sessionStorage.getItem(TOKEN_KEY);
  } catch (_) {
    return fromHash; // no storage: the token lives as long as the page
  }
}

/** A dashboard URL pasted into this tab only changes the fragment: start over with its token. */
function onHashChange() {
  if (!new URLSearchParams(location.hash.slice(1)).get("token")) return;
  const token = readToken();
  if (token && token !== state.token) location.reload();
}

function showAuth(text) {
  $("#auth-text").textContent = text;
  $("#auth").hidden = false;
  $("#main").hidden = true;
}

function setConn(s) {
  state.conn = s;
  const el = $("#conn");
  el.dataset.state = s;
  el.textContent = CONN_TEXT[s];
}

function unauthorized() {
  if (state.conn === "unauthorized") return;
  try { sessionStorage.removeItem(TOKEN_KEY); } catch (_) { /* no storage: nothing to forget */ }
  setConn("unauthorized");
  if (state.eventsCtrl) state.eventsCtrl.abort();
  closeLog();
  showAuth("The server refused this dashboard's access token (401).");
}

// ---------------------------------------------------------------- loading

const pendingParts = new Set();
const partSeq = {};
const appliedSeq = {};

/** Asks for parts of the data to be refetched; calls in the same task are coalesced. */
function refresh(parts) {
  if (state.conn === "unauthorized") return;
  const empty = pendingParts.size === 0;
  for (const p of parts) pendingParts.add(p);
  if (empty) queueMicrotask(flushRefresh);
}

function loadAll() {
  refresh(["status", "jobs", "runs", "services", "holds", "readiness", "hosts"]);
}

function flushRefresh() {
  const parts = new Set(pendingParts);
  pendingParts.clear();
  const simple = {
    status: ["/api/status", (s) => { state.status = s; renderStatus(); }],
    jobs: ["/api/jobs", (jobs) => { state.jobs = jobs; renderJobs(); renderRuns(); rearmClock(); }],
    runs: [`/api/runs?limit=${PAGE}`, (runs) => { mergeRuns(runs, false); renderRuns(); renderJobs(); selectedChanged(); }],
    holds: ["/api/holds", (holds) => { state.holds = holds; renderHolds(); }],
    hosts: ["/api/hosts", applyHosts],
  };
  if (parts.has("hosts")) {
    state.hostsAskedAt = Date.now();
    state.hostsDue = false;
  }
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

function rearmClock() {
  for (const [name, entry] of state.readiness) entry.nextChange = nextClockChange(name, entry.data);
}

function clockCrossings(now) {
  let due = false;
  for (const entry of state.readiness.values()) {
    if (entry.nextChange !== null && entry.nextChange <= now) {
      entry.nextChange = null;
      due = true;
    }
  }
  if (due) refresh(["holds", "readiness"]);
}

function dependsOn(job, service) {
  return service === "stead" || (job.depends_on || []).includes(service);
}

function mergeRuns(list, paging) {
  for (const run of list) storeRun(run);
  if (list.length) {
    const min = Math.min(...list.map((r) => r.id));
    state.pagedOldest = state.pagedOldest === null ? min : Math.min(state.pagedOldest, min);
  }
  if (paging || !state.pagedDeep) state.hasOlder = list.length === PAGE;
  if (paging) state.pagedDeep = true;
}

function loadOlder(btn) {
  if (state.pagedOldest === null) return;
  withBusy(btn, async () => {
    try {
      mergeRuns(await api(`/api/runs?limit=${PAGE}&before_id=${state.pagedOldest}`), true);
      renderRuns();
    } catch (err) {
      showError("Could not load older runs", err);
    }
  });
}

// ---------------------------------------------------------------- event stream

/** A server-sent-events parser: feed it decoded text, it calls onEvent(type, data). */
function sseParser(onEvent) {
  let buf = "";
  let type = "";
  let data = [];
  const line = (l) => {
    if (l === "") {
      if (data.length) onEvent(type || "message", data.join("\n"));
      type = "";
      data = [];
      return;
    }
    if (l[0] === ":") return; // keep-alive comment
    const i = l.indexOf(":");
    const field = i < 0 ? l : l.slice(0, i);
    let value = i < 0 ? "" : l.slice(i + 1);
    if (value[0] === " ") value = value.slice(1);
    if (field === "event") type = value;
    else if (field === "data") data.push(value);
  };
  return (chunk) => {
    buf += chunk;
    for (;;) {
      const m = /\r\n|\n|\r(?!$)/.exec(buf); // a trailing \r may be half of \r\n
      if (!m) break;
      line(buf.slice(0, m.index));
      buf = buf.slice(m.index + m[0].length);
    }
  };
}

function onEvent(type, data) {
  let body;
  try { body = JSON.parse(data); } catch (_) { return; }
  if (type === "hello") {
    state.status = body;
    renderStatus();
  } else if (type === "run") {
    upsertRun(body);
  } else if (type === "changed") {
    refresh(["jobs", "services", "holds", "readiness", "hosts"]);
  } else if (type === "lagged") {
    loadAll();
  }
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Reads /api/events forever, reconnecting with backoff and refetching everything on each connect. */
async function eventLoop() {
  let delay = 1000;
  for (let attempt = 0; ; attempt += 1) {
    setConn(attempt === 0 ? "connecting" : "reconnecting");
    const ctrl = new AbortController();
    state.eventsCtrl = ctrl;
    let connected = false;
    try {
      const res = await request("/api/events", { headers: { Accept: "text/event-stream" }, signal: ctrl.signal });
      connected = true;
      delay = 1000;
      setConn("live");
      loadAll();
      const reader = res.body.getReader();
      const decoder = new TextDecoder();
      const feed = sseParser(onEvent);
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        feed(decoder.decode(value, { stream: true }));
      }
    } catch (_) {
      // dropped or refused: fall through to the backoff
    }
    if (state.conn === "unauthorized") return;
    if (!connected && attempt === 0) loadAll(); // show what can be shown without the stream
    setConn("reconnecting");
    await sleep(delay);
    delay = Math.min(delay * 2, 10000);
  }
}

/** How far a run has got; a row never goes back (a late answer must not undo a newer event). */
const progress = (r) => (r.status === "queued" ? 0 : r.status === "running" ? 2 : 4) + (r.resolution ? 1 : 0);

function storeRun(run) {
  const prev = state.runs.get(run.id);
  if (prev && progress(prev) > progress(run)) return false;
  state.runs.set(run.id, run);
  return true;
}

/** A run event (or an action's answer): upsert by id and refresh what depends on it. */
function upsertRun(run) {
  const prev = state.runs.get(run.id);
  if (!storeRun(run)) return;
  scheduleRender();
  if (!prev) refresh(["jobs", "readiness"]); // a fire moves next_fire_at; a run may block a restart
  else if (prev.status !== run.status) refresh(["readiness"]);
  if (!prev || prev.status !== run.status || prev.machine_id !== run.machine_id) hostsAfterRun();
  if (run.id === state.selectedId) selectedChanged();
}

function selectedChanged() {
  if (!state.runs.has(state.selectedId)) return;
  renderDetails();
  if (logSession) pumpLog(logSession);
}

let renderQueued = false;
function scheduleRender() {
  if (renderQueued) return;
  renderQueued = true;
  queueMicrotask(() => {
    renderQueued = false;
    renderRuns();
    renderJobs();
  });
}

// ---------------------------------------------------------------- header

function renderStatus() {
  const s = state.status;
  if (!s) return;
  $("#srv-version").textContent = s.version;
  $("#srv-pid").textContent = String(s.pid);
  $("#srv-epoch").textContent = String(s.epoch);
  $("#srv-started").replaceChildren(timeEl(s.started_at));
  $("#srv-lease").replaceChildren(timeEl(s.lease_expires_at, { mode: "lease" }));
  $("#srv-dir").textContent = s.state_dir;
  $("#server").title = `server ${s.server_id}, protocol ${s.protocol}, socket ${s.socket}`;
  renderHosts(); // which host is this server's
}

// ---------------------------------------------------------------- jobs

function latestRunByJob() {
  const last = new Map();
  for (const run of state.runs.values()) {
    const cur = last.get(run.job);
    if (!cur || run.id > cur.id) last.set(run.job, run);
  }
  return last;
}

function renderJobs() {
  const last = latestRunByJob();
  reconcile($("#jobs tbody"), state.jobs, (job) => job.name,
    (job) => JSON.stringify([job, lastRunSig(last.get(job.name))]), (job) => jobRow(job, last.get(job.name)));
  $("#jobs-empty").hidden = state.jobs.length > 0;
  renderJobFilter();
  scheduleTimeline();
}

const lastRunSig = (r) => (r ? [r.id, r.status, r.started_at || r.created_at] : null);

function jobRow(job, lastRun) {
  const enabled = job.enabled !== false;
  return h("tr", { "data-job": job.name, "data-enabled": String(enabled), class: enabled ? null : "disabled" },
    h("th", { scope: "row" }, h("div", { class: "job-name", text: job.name }), jobMeta(job)),
    h("td", {}, scheduleEl(job)),
    h("td", {}, job.tz ? job.tz : job.schedule_kind === "cron" ? muted("local", "the machine's time zone") : muted("—")),
    h("td", {}, job.next_fire_at ? timeEl(job.next_fire_at) : muted(enabled ? "—" : "— (disabled)")),
    h("td", {}, h("span", { class: `pill ${enabled ? "pill-on" : "pill-off"}`, text: enabled ? "enabled" : "disabled" })),
    h("td", {}, lastRun ? lastRunEl(lastRun) : muted("—", "no run of this job among the loaded runs")),
    h("td", { class: "actions" },
      h("button", { type: "button", "data-action": "run", text: "Run now" }),
      h("button", { type: "button", "data-action": "toggle", text: enabled ? "Disable" : "Enable" })),
  );
}

function jobMeta(job) {
  const command = job.shell ? (job.command || []).join(" ") : (job.command || []).map(quoteArg).join(" ");
  const meta = h("div", { class: "job-meta" }, h("code", { class: "command", text: command, title: command }));
  // Fields left out of the JSON are at their defaults; tag only what differs.
  const tags = [
    job.shell && ["sh -c", "shell: the command is one sh -c script"],
    ...(job.depends_on || []).map((s) => [`needs ${s}`, `depends_on: ${s}`]),
    job.concurrency && [`concurrency ${job.concurrency}`],
    job.timeout && [`timeout ${job.timeout}`],
    job.landed_check && ["receipt check", `landed_check: ${job.landed_check}`],
    (job.alternatives || []).length && [`${job.alternatives.length} alternative(s)`],
    job.on_failure && ["on failure hook", `on_failure: ${job.on_failure}`],
    job.resume === false && ["no resume"],
    job.catch_up && [`catch_up ${job.catch_up}`],
  ].filter(Boolean).map(([text, title]) => tag(text, "tag-plain", title));
  if (tags.length) meta.append(h("div", { class: "tags" }, tags));
  return meta;
}

const quoteArg = (a) => (/^[\w@%+=:,./-]+$/.test(a) ? a : `'${a.replace(/'/g, "'\\''")}'`);

function scheduleEl(job) {
  if (job.cron) return h("span", {}, "cron ", code(job.cron));
  if (job.every) return h("span", { text: `every ${job.every}` });
  return muted("on demand");
}

function lastRunEl(run) {
  return h("span", { class: "last-run" },
    statusBadge(run.status),
    h("button", { type: "button", class: "link", "data-action": "goto", "data-target": run.id, text: `#${run.id}` }),
    run.started_at || run.created_at ? timeEl(run.started_at || run.created_at, { abs: false }) : null);
}

// ---------------------------------------------------------------- runs

const isActive = (run) => run.status === "queued" || run.status === "running";
const isReceipt = (run) => /^landed\b.*receipt/i.test(run.resolution || "");

function matchesFilter(run) {
  return (!state.filter.job || run.job === state.filter.job)
    && (!state.filter.status || run.status === state.filter.status);
}

function renderRuns() {
  const all = [...state.runs.values()].sort((a, b) => b.id - a.id);
  const shown = all.filter(matchesFilter);
  const shared = isShared();
  reconcile($("#runs tbody"), shown, (r) => String(r.id),
    (r) => JSON.stringify([r, shared && hostView(r)]), runRow);
  markSelected();
  const empty = $("#runs-empty");
  empty.hidden = shown.length > 0;
  empty.textContent = all.length ? "No loaded run matches these filters." : "No runs yet.";
  $("#runs-count").textContent = `${shown.length} shown of ${all.length} loaded`;
  $("#load-older").hidden = !state.hasOlder;
  renderHostsSummary(); // it counts the runs waiting for any host
  scheduleTimeline();
}

function renderJobFilter() {
  const names = new Set(state.jobs.map((j) => j.name));
  for (const run of state.runs.values()) names.add(run.job);
  const sorted = [...names].sort();
  const select = $("#filter-job");
  const have = [...select.options].slice(1).map((o) => o.value);
  if (have.join("\n") === sorted.join("\n")) return;
  select.replaceChildren(h("option", { value: "", text: "All jobs" }), ...sorted.map((n) => h("option", { value: n, text: n })));
  select.value = names.has(state.filter.job) ? state.filter.job : "";
  state.filter.job = select.value;
}

function runRow(run) {
  return h("tr", { "data-run-id": run.id, "data-status": run.status, "data-trigger": run.trigger, class: "run" },
    h("th", { scope: "row" },
      h("button", { type: "button", class: "link", "data-action": "select", title: `Show run ${run.id}`, text: `#${run.id}` })),
    h("td", { class: "job-cell", text: run.job }),
    h("td", {}, triggerEl(run)),
    h("td", { class: "status-cell" }, statusBadge(run.status),
      isActive(run) ? h("button", { type: "button", class: "small", "data-action": "cancel", text: "Cancel" }) : null),
    isShared() ? h("td", { class: "host-cell" }, hostEl(run, isActive(run))) : null,
    h("td", {}, run.started_at ? timeEl(run.started_at)
      : h("span", { class: "muted", title: "created; not started" }, timeEl(run.created_at))),
    h("td", { class: "num" }, durationEl(run), exitEl(run)),
    h("td", { class: "reason" }, run.reason ? h("span", { text: run.reason, title: run.reason }) : muted("—")),
    h("td", { class: "resolution" }, resolutionEl(run)),
  );
}

function statusBadge(status) {
  const view = STATUS_VIEW[status] || { icon: "?", label: status };
  return h("span", { class: `badge b-${status}`, title: view.title || status },
    status === "running" ? h("span", { class: "dot", "aria-hidden": "true" })
      : h("span", { class: "icon", "aria-hidden": "true", text: view.icon }),
    h("span", { class: "label", text: view.label }));
}

const TRIGGER_LABEL = { scheduled: "scheduled", on_demand: "on demand", resume: "resume", catch_up: "catch-up" };

function triggerEl(run) {
  const wrap = h("span", { class: "trigger" });
  if (run.trigger === "resume") {
    const first = run.original_trigger ? `, first ${TRIGGER_LABEL[run.original_trigger] || run.original_trigger}` : "";
    wrap.append(tag(`↻ resumes #${run.parent_id ?? "?"}`, "tag-resume", `a resume of cut run ${run.parent_id}${first}`));
  } else if (run.trigger === "catch_up") {
    const passed = run.status === "skipped";
    wrap.append(tag(passed ? "passed over" : "caught up", "tag-catchup",
      passed ? "missed fires recorded as not run" : "makes up for a fire missed while stead was down or asleep"));
    if (run.scheduled_at) wrap.append(h("span", { class: "sub" }, "for ", timeEl(run.scheduled_at, { rel: false })));
  } else {
    wrap.append(tag(TRIGGER_LABEL[run.trigger] || run.trigger, `tag-${run.trigger}`));
  }
  return wrap;
}

function durationEl(run) {
  if (!run.started_at) return muted("—");
  const start = Date.parse(run.started_at);
  if (run.ended_at) return h("span", { text: durText(Date.parse(run.ended_at) - start, false) });
  if (run.status === "running") {
    return h("span", { "data-rel": "dur", "data-t": start, text: durText(Date.now() - start, true) });
  }
  return muted("—");
}

/** "exit 3" or "signal 15", under the duration; nothing when the run has neither. */
function exitEl(run) {
  if (run.exit_code !== null && run.exit_code !== undefined) {
    return h("div", { class: `sub exit ${run.exit_code === 0 ? "" : "nonzero"}`, text: `exit ${run.exit_code}` });
  }
  if (run.signal !== null && run.signal !== undefined) {
    return h("div", { class: "sub exit nonzero", text: `signal ${run.signal}`, title: SIGNALS[run.signal] || null });
  }
  return null;
}

function resolutionEl(run) {
  const wrap = h("span", {});
  if (isReceipt(run)) {
    wrap.append(tag("✓ landed by receipt", "tag-receipt", `${run.resolution}: its landed check proved the work landed`));
  } else if (run.status === "interrupted" && !run.resolution) {
    wrap.append(tag("owed", "tag-owed", "cut, not failed: stead resumes it once, after the resume delay"));
  } else if (run.resolution) {
    wrap.append(h("span", { class: "res-text", text: run.resolution, title: run.resolution }));
  } else {
    wrap.append(muted("—"));
  }
  return wrap;
}

function markSelected() {
  for (const tr of $("#runs tbody").children) {
    const selected = Number(tr.dataset.runId) === state.selectedId;
    tr.classList.toggle("selected", selected);
    if (selected) tr.setAttribute("aria-current", "true");
    else tr.removeAttribute("aria-current");
  }
  for (const bar of $("#tl-layer").children) {
    if (bar.dataset.barRun) bar.classList.toggle("selected", Number(bar.dataset.barRun) === state.selectedId);
  }
}

// ---------------------------------------------------------------- runs timeline
//
// One lane per job, time running left to right up to "now" (TL_PAST of the width), then a
// strip that shows the fires coming next. Bars sit on one layer, positioned in percent of a
// time frame fixed when the picture is drawn; the 1 s tick slides that layer left and grows
// the bars of live runs, and once it has slid TL_REANCHOR % the picture is drawn afresh (at
// most once per animation frame, like every data change).

const TL_WINDOWS = {
  "1h": { ms: 3600000, label: "the last hour", step: 600000 },
  "6h": { ms: 6 * 3600000, label: "the last 6 hours", step: 3600000 },
  "24h": { ms: 24 * 3600000, label: "the last 24 hours", step: 3 * 3600000 },
};
const TL_PAST = 0.92; // the window's share of the width; the rest, right of "now", is for fires to come
const TL_LANE = 26; // px per job lane
const TL_AXIS = 22; // px for the time labels under the lanes
const TL_REANCHOR = 1; // % of the width the picture may slide before it is drawn afresh
const TL_WINDOW_KEY = "stead-timeline-window";
const fmtHM = new Intl.DateTimeFormat(undefined, { hour: "2-digit", minute: "2-digit" });
const fmtDayTick = new Intl.DateTimeFormat(undefined, { month: "short", day: "numeric" });
const TL_ORDER = ["running", "queued", "succeeded", "failed", "cancelled", "interrupted", "skipped"];

/** The drawn picture: its frame (t0 = "now" when drawn), and the bars that grow with the clock. */
const tl = { t0: null, from: 0, spanMs: 1, live: [], queued: false };

function scheduleTimeline() {
  if (tl.queued) return;
  tl.queued = true;
  requestAnimationFrame(() => {
    tl.queued = false;
    renderTimeline();
  });
}

const tlPct = (t) => ((t - tl.from) / tl.spanMs) * 100;
function tlPlace(el, start, end) {
  el.style.right = `${100 - tlPct(end)}%`;
  el.style.width = `max(3px, ${(Math.max(0, end - start) / tl.spanMs) * 100}%)`;
}

/** Where a run sits in time: from its start (or creation) to its end, or now while it is live. */
function runSpan(run, now) {
  const created = Date.parse(run.created_at);
  if (run.status === "skipped") return [created, created];
  const start = run.started_at ? Date.parse(run.started_at) : created;
  if (run.ended_at) return [start, Date.parse(run.ended_at)];
  return [start, isActive(run) ? now : start];
}

function renderTimeline() {
  if (!appliedSeq.runs || !appliedSeq.jobs) return; // "Loading…" until both are in
  const win = TL_WINDOWS[state.tlWindow];
  const now = Date.now();
  Object.assign(tl, { t0: now, from: now - win.ms, spanMs: win.ms / TL_PAST, live: [] });
  const ahead = now + tl.spanMs * (1 - TL_PAST); // the right edge
  const until = ahead + (tl.spanMs * TL_REANCHOR) / 100; // what may slide in before the next drawing

  const runs = [];
  for (const run of state.runs.values()) {
    if (!matchesFilter(run)) continue;
    const [start, end] = runSpan(run, now);
    if (end >= tl.from && start <= until) runs.push(run);
  }
  runs.sort((a, b) => a.id - b.id);
  const names = state.jobs.map((j) => j.name);
  const known = new Set(names);
  for (const run of runs) {
    if (!known.has(run.job)) { // a removed job's runs keep a lane
      known.add(run.job);
      names.push(run.job);
    }
  }
  const lanes = state.filter.job ? names.filter((n) => n === state.filter.job) : names;
  const laneOf = new Map(lanes.map((n, i) => [n, i]));
  const jobs = new Map(state.jobs.map((j) => [j.name, j]));

  const fig = $("#timeline");
  fig.style.setProperty("--tl-lane", `${TL_LANE}px`);
  fig.style.setProperty("--tl-axis", `${TL_AXIS}px`);
  fig.style.setProperty("--tl-past", `${TL_PAST * 100}%`);
  $("#tl-summary").textContent = timelineSummary(runs, lanes, jobs, now);
  $("#tl-grid").hidden = lanes.length === 0;
  $("#tl-plot").style.height = `${lanes.length * TL_LANE + TL_AXIS}px`;
  $("#tl-lanes").style.height = `${lanes.length * TL_LANE}px`;
  $("#tl-labels").replaceChildren(...lanes.map((name) => {
    const job = jobs.get(name);
    const off = job && job.enabled === false;
    return h("div", { class: `tl-name${off ? " off" : ""}`, text: name, title: `${name}${off ? " (disabled)" : job ? "" : " (removed)"}` });
  }));

  const layer = $("#tl-layer");
  layer.style.transform = "";
  const width = layer.clientWidth || 1; // px: labels that would be cut at an edge or hit "now" are left out
  const items = [];
  for (const t of tlTicks(tl.from - win.step, until, win.step)) {
    const x = tlPct(t);
    const gl = h("div", { class: "tl-gl" });
    gl.style.left = `${x}%`;
    gl.style.height = `${lanes.length * TL_LANE}px`;
    items.push(gl);
    const px = (x / 100) * width;
    if (px < 32 || px > width - 32 || Math.abs(px - TL_PAST * width) < 44) continue;
    const d = new Date(t);
    const midnight = d.getHours() === 0 && d.getMinutes() === 0;
    const label = h("span", { class: `tl-tick${midnight ? " day" : ""}`, text: midnight && win.step >= 3600000 ? fmtDayTick.format(d) : fmtHM.format(d) });
    label.style.left = `${x}%`;
    label.style.top = `${lanes.length * TL_LANE}px`;
    items.push(label);
  }
  const drawn = new Map();
  for (const run of runs) {
    const lane = laneOf.get(run.job);
    if (lane === undefined) continue;
    drawn.set(run.id, run);
    items.push(runBar(run, lane, now));
  }
  for (const run of drawn.values()) {
    if (run.trigger === "resume") items.push(...resumeMarks(run, drawn.get(run.parent_id), laneOf.get(run.job), now));
  }
  for (const name of lanes) {
    const job = jobs.get(name);
    const t = job && job.enabled !== false && job.next_fire_at ? Date.parse(job.next_fire_at) : NaN;
    if (!(t > now && t <= ahead)) continue;
    const fire = h("div", { class: "tl-fire", "data-fire-job": name, "data-t": t, title: fireTitle(name, t, now) });
    fire.style.left = `${tlPct(t)}%`;
    fire.style.top = `${laneOf.get(name) * TL_LANE}px`;
    items.push(fire);
  }
  layer.replaceChildren(...items);
}

function runBar(run, lane, now) {
  const [start, end] = runSpan(run, now);
  const skipped = run.status === "skipped";
  const el = h("div", {
    class: skipped ? "tl-skip" : `tl-bar s-${run.status}${isReceipt(run) ? " receipt" : ""}`,
    "data-bar-run": run.id,
    title: barTitle(run, now),
  });
  el.style.top = `${lane * TL_LANE}px`;
  if (skipped) el.style.left = `${tlPct(start)}%`;
  else tlPlace(el, start, end); // by its end, so a short bar's minimum width never crosses "now"
  if (!run.ended_at && isActive(run)) tl.live.push({ el, start });
  if (run.id === state.selectedId) el.classList.add("selected");
  return el;
}

/** A resume: ↻ at its start, and an arc from the end of the cut run it resumes, when drawn. */
function resumeMarks(run, parent, lane, now) {
  const [start] = runSpan(run, now);
  const top = `${lane * TL_LANE}px`;
  const marks = [];
  let mid = tlPct(start);
  if (parent) {
    const [, parentEnd] = runSpan(parent, now);
    const a = tlPct(Math.min(parentEnd, start));
    const half = (mid - a) / 2;
    mid = a + half;
    const arc = h("div", { class: "tl-link" });
    arc.style.left = `calc(${mid}% - max(8px, ${half}%))`;
    arc.style.width = `max(16px, ${half * 2}%)`;
    arc.style.top = top;
    marks.push(arc);
  }
  const glyph = h("span", { class: "tl-resume", text: "↻" });
  glyph.style.left = `${mid}%`;
  glyph.style.top = top;
  marks.push(glyph);
  return marks;
}

/** Tick times from `from` to `until`, on round local times `step` apart. */
function tlTicks(from, until, step) {
  const d = new Date(from);
  d.setSeconds(0, 0);
  const minutes = step < 3600000;
  const n = minutes ? step / 60000 : step / 3600000;
  if (minutes) d.setMinutes(Math.ceil(d.getMinutes() / n) * n);
  else {
    d.setMinutes(0);
    d.setHours(Math.ceil(d.getHours() / n) * n);
  }
  const out = [];
  for (let i = 0; d.getTime() <= until && i < 100; i += 1) {
    out.push(d.getTime());
    if (minutes) d.setMinutes(d.getMinutes() + n);
    else d.setHours(d.getHours() + n);
  }
  return out;
}

/** "12 runs in the last hour: 10 succeeded, 1 failed, 1 cut." and the next fire. */
function timelineSummary(runs, lanes, jobs, now) {
  const win = TL_WINDOWS[state.tlWindow];
  const counts = new Map();
  let n = 0;
  for (const run of runs) {
    const [start, end] = runSpan(run, now);
    if (end < tl.from || start > now) continue;
    n += 1;
    counts.set(run.status, (counts.get(run.status) || 0) + 1);
  }
  const of = state.filter.job ? ` of ${state.filter.job}` : "";
  const kind = state.filter.status ? `${(STATUS_VIEW[state.filter.status] || { label: state.filter.status }).label} ` : "";
  const parts = TL_ORDER.filter((s) => counts.has(s)).map((s) => `${counts.get(s)} ${(STATUS_VIEW[s] || { label: s }).label}`);
  const breakdown = state.filter.status ? "" : `: ${parts.join(", ")}`;
  let text = n ? `${n} ${kind}${n === 1 ? "run" : "runs"}${of} in ${win.label}${breakdown}.` : `No ${kind}runs${of} in ${win.label}.`;
  const oldest = [...state.runs.values()].reduce((a, r) => (!a || r.id < a.id ? r : a), null);
  if (state.hasOlder && oldest && Date.parse(oldest.created_at) > tl.from) text += " Older runs are not loaded.";
  let next = null;
  for (const name of lanes) {
    const job = jobs.get(name);
    const t = job && job.enabled !== false && job.next_fire_at ? Date.parse(job.next_fire_at) : NaN;
    if (t > now && (!next || t < next[1])) next = [name, t];
  }
  if (next) text += ` Next fire: ${next[0]} at ${absText(next[1])}.`;
  return text;
}

function barTitle(run, now) {
  const view = STATUS_VIEW[run.status] || { label: run.status };
  const status = run.status === "interrupted" ? "cut (interrupted, not a failure)" : view.label;
  const trigger = run.trigger === "resume" ? `↻ resume of #${run.parent_id ?? "?"}` : TRIGGER_LABEL[run.trigger] || run.trigger;
  const lines = [`Run #${run.id} · ${run.job}`, `${status} · ${trigger}`];
  if (isShared()) {
    const where = hostView(run);
    lines.push(where.any ? where.text : `on ${where.text}`);
  }
  if (run.status === "skipped" || !run.started_at) {
    lines.push(`created ${absText(Date.parse(run.created_at))}${run.status === "skipped" ? "" : ", not started"}`);
  } else {
    const start = Date.parse(run.started_at);
    lines.push(`started ${absText(start)}`);
    let dur = run.ended_at ? `duration ${durText(Date.parse(run.ended_at) - start, false)}`
      : run.status === "running" ? `running for ${durText(now - start, true)}` : "duration —";
    if (run.exit_code !== null && run.exit_code !== undefined) dur += ` · exit ${run.exit_code}`;
    else if (run.signal !== null && run.signal !== undefined) dur += ` · signal ${run.signal}`;
    lines.push(dur);
  }
  if (run.reason && run.status !== "succeeded") lines.push(run.reason);
  if (run.resolution) lines.push(run.resolution);
  return lines.join("\n");
}

const fireTitle = (job, t, now) => `next fire of ${job}: ${absText(t)} (${relText(t, now)})`;

/** Titles read the clock when hovered, so a running bar's duration is current. */
function onBarHover(e) {
  const el = e.target.closest("[data-bar-run], [data-fire-job]");
  if (!el) return;
  if (el.dataset.fireJob) {
    el.title = fireTitle(el.dataset.fireJob, Number(el.dataset.t), Date.now());
    return;
  }
  const run = state.runs.get(Number(el.dataset.barRun));
  if (run) el.title = barTitle(run, Date.now());
}

/** The 1 s tick: slide the picture with the clock and grow live bars; redraw once it slid far. */
function timelineTick(now) {
  if (tl.t0 === null || tl.queued) return;
  const shift = ((now - tl.t0) / tl.spanMs) * 100;
  if (shift < 0 || shift > TL_REANCHOR) {
    scheduleTimeline();
    return;
  }
  $("#tl-layer").style.transform = `translateX(${-shift}%)`;
  for (const { el, start } of tl.live) tlPlace(el, start, now);
}

function setTimelineWindow(key) {
  if (!TL_WINDOWS[key]) return;
  state.tlWindow = key;
  try { localStorage.setItem(TL_WINDOW_KEY, key); } catch (_) { /* no storage: the choice lasts the page */ }
  for (const b of document.querySelectorAll('[data-action="tl-window"]')) {
    b.setAttribute("aria-pressed", String(b.dataset.window === key));
  }
  scheduleTimeline();
}

function restoreTimelineWindow() {
  let key = null;
  try { key = localStorage.getItem(TL_WINDOW_KEY); } catch (_) { /* no storage */ }
  setTimelineWindow(TL_WINDOWS[key] ? key : "1h");
}

// ---------------------------------------------------------------- run details and log

const RUN_FIELDS = [
  "id", "job", "status", "trigger", "original_trigger", "attempt", "parent_id", "exit_code", "signal",
  "reason", "resolution", "scheduled_at", "created_at", "started_at", "ended_at", "idempotency_key",
  "machine_id", "boot_id", "monitor_pid", "log_path",
];
const TIME_FIELDS = new Set(["scheduled_at", "created_at", "started_at", "ended_at"]);

async function selectRun(id) {
  if (!Number.isFinite(id) || id === state.selectedId) return;
  if (!state.runs.has(id)) {
    try {
      storeRun(await api(`/api/runs/${id}`));
      scheduleRender();
    } catch (err) {
      showError(`Could not load run ${id}`, err);
      return;
    }
  }
  state.selectedId = id;
  markSelected();
  renderDetails();
  openLog(id);
}

function renderDetails() {
  const run = state.runs.get(state.selectedId);
  $("#details-empty").hidden = Boolean(run);
  $("#details-body").hidden = !run;
  if (!run) return;
  const shared = isShared();
  $("#details-h").replaceChildren(`Run #${run.id} `, h("span", { class: "job-cell", text: run.job }), " ", statusBadge(run.status),
    ...(shared ? [h("span", { class: "details-host" }, hostView(run).any ? null : "on ", hostEl(run))] : []));
  $("#details-explain").textContent = explain(run);
  $("#run-fields").replaceChildren(
    ...RUN_FIELDS.flatMap((f) => [
      shared && f === "machine_id" ? h("div", {}, h("dt", { text: "host" }), h("dd", {}, hostEl(run))) : null,
      h("div", {}, h("dt", { text: f }), h("dd", {}, fieldValue(run, f))),
    ]).filter(Boolean),
    h("div", {}, h("dt", { text: "duration" }), h("dd", {}, durationEl(run))),
  );
  $("#details-nav").replaceChildren(...relatedRuns(run));
}

function fieldValue(run, f) {
  const v = run[f];
  if (v === null || v === undefined) return muted("null");
  if (f === "status") return statusBadge(v);
  if (TIME_FIELDS.has(f)) return timeEl(v);
  if (f === "signal" && SIGNALS[v]) return `${v} (${SIGNALS[v]})`;
  return h("span", { class: typeof v === "string" && f !== "reason" && f !== "resolution" ? "mono" : null, text: String(v) });
}

function explain(run) {
  if (isReceipt(run)) return "Cut short, then closed as succeeded: its landed check proved the work landed, so nothing reran.";
  if (run.status === "interrupted") {
    return run.resolution
      ? "Cut short by something other than itself — not a failure. Its debt is settled (see resolution)."
      : "Cut short by something other than itself — not a failure. Still owed: stead resumes it once, after the resume delay.";
  }
  if (run.trigger === "resume") return `Resumes cut run #${run.parent_id}, with the same idempotency key.`;
  if (run.trigger === "catch_up") {
    return run.status === "skipped" ? "Missed fires that were not run, recorded with the reason." : "Makes up for a fire missed while stead was down or the machine slept.";
  }
  return "";
}

function relatedRuns(run) {
  const links = [];
  if (run.parent_id !== null && run.parent_id !== undefined) {
    const what = run.trigger === "resume" ? "the run it resumes" : "its parent run";
    links.push([`Show ${what}, #${run.parent_id}`, run.parent_id]);
  }
  const m = /resumed as run (\d+)/.exec(run.resolution || "");
  if (m) links.push([`Show its resume, run #${m[1]}`, Number(m[1])]);
  for (const other of state.runs.values()) {
    if (other.parent_id !== run.id || links.some(([, id]) => id === other.id)) continue;
    links.push([`Show run #${other.id}, ${other.trigger === "resume" ? "which resumes it" : "its child"}`, other.id]);
  }
  return links.map(([text, id]) => h("button", { type: "button", class: "small", "data-action": "goto", "data-target": id, text }));
}

let logSession = null;

function closeLog() {
  if (!logSession) return;
  logSession.closed = true;
  if (logSession.ctrl) logSession.ctrl.abort();
  logSession = null;
}

function openLog(id) {
  closeLog();
  const pre = $("#log-text");
  pre.replaceChildren();
  logSession = {
    id, offset: 0, ctrl: null, following: false, busy: false, again: false,
    loaded: false, final: false, closed: false, error: false,
    node: pre.appendChild(document.createTextNode("")), decoder: new TextDecoder(),
  };
  pumpLog(logSession);
}

/**
 * Brings the shown log up to date: the first read shows what exists; then, while the run is
 * queued or running and Follow is checked, a follow stream appends as it grows; once the run
 * has ended, one last read picks up the rest. Calls while busy are folded into one more pass.
 */
async function pumpLog(s) {
  if (s.busy) {
    s.again = true;
    return;
  }
  s.busy = true;
  try {
    do {
      s.again = false;
      for (;;) {
        if (s.closed || s.final) break;
        const run = state.runs.get(s.id);
        const active = Boolean(run && isActive(run));
        const follow = s.loaded && active && $("#log-follow").checked;
        if (s.loaded && active && !follow) break; // not following: wait for an event or the checkbox
        if (!(await readLog(s, follow))) break;
        s.loaded = true;
        if (!active) s.final = true; // read after the run ended: the log is complete
        else if (follow) break; // the follow ended: the run's end event brings one last read
      }
    } while (s.again && !s.closed);
  } finally {
    s.busy = false;
    updateLogNote(s);
  }
}

async function readLog(s, follow) {
  const ctrl = new AbortController();
  s.ctrl = ctrl;
  s.following = follow;
  updateLogNote(s);
  try {
    const res = await request(`/api/runs/${s.id}/log?offset=${s.offset}${follow ? "&follow=true" : ""}`,
      { signal: ctrl.signal, headers: { Accept: "text/plain" } });
    const reader = res.body.getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      if (s.closed) return false;
      s.offset += value.byteLength;
      appendLog(s, s.decoder.decode(value, { stream: true }));
    }
    const after = Number(res.headers.get("X-Stead-Log-Offset"));
    if (!follow && res.headers.has("X-Stead-Log-Offset") && Number.isFinite(after)) s.offset = after;
    s.error = false;
    return true;
  } catch (err) {
    if (!s.closed && err.name !== "AbortError") {
      s.error = true;
      showError(`Could not read the log of run ${s.id}`, err);
    }
    return false;
  } finally {
    if (s.ctrl === ctrl) s.ctrl = null;
    s.following = false;
  }
}

function appendLog(s, text) {
  if (!text || s.closed) return;
  s.node.appendData(text);
  if (s.following) updateLogNote(s);
  if ($("#log-follow").checked) {
    const pre = $("#log-text");
    pre.scrollTop = pre.scrollHeight;
  }
}

function updateLogNote(s) {
  if (s !== logSession) return;
  const run = state.runs.get(s.id);
  const bytes = `${s.offset.toLocaleString()} bytes`;
  let note;
  if (s.following) note = `following… (${bytes})`;
  else if (!s.loaded) note = "loading…";
  else if (s.error) note = `stopped reading (${bytes})`;
  else if (run && isActive(run)) note = `${run.status}; not following (${bytes})`;
  else note = s.offset ? `end of log (${bytes})` : "no output";
  $("#log-note").textContent = note;
  $("#log").dataset.following = String(s.following);
}

function onFollowChange() {
  const s = logSession;
  if (!s) return;
  if (!$("#log-follow").checked) {
    if (s.following && s.ctrl) s.ctrl.abort();
  } else {
    $("#log-text").scrollTop = $("#log-text").scrollHeight;
    pumpLog(s);
  }
}

// ---------------------------------------------------------------- services and holds

function renderServices() {
  reconcile($("#services-list"), state.services, (svc) => svc.name,
    (svc) => JSON.stringify([svc, (state.readiness.get(svc.name) || {}).data || null]), serviceCard);
  $("#services-empty").hidden = state.services.length > 0;
}

function serviceCard(svc) {
  const r = (state.readiness.get(svc.name) || {}).data;
  const facts = [
    ["restart", svc.restart], ["ready", svc.ready], ["systemd unit", svc.systemd_unit],
    ["launchd label", svc.launchd_label], ["process", svc.process],
  ].filter(([, v]) => v);
  const dependents = svc.dependents || [];
  return h("article", { class: "service", "data-service": svc.name, "data-restarting": String(svc.restarting) },
    h("header", { class: "service-head" },
      h("h3", { text: svc.name }),
      svc.builtin ? tag("built in", "tag-plain") : null,
      svc.restarting ? h("span", { class: "pill pill-warn", text: "⟳ restarting" }) : h("span", { class: "pill pill-off", text: "not restarting" })),
    facts.length ? h("dl", { class: "facts" }, facts.map(([k, v]) => h("div", {}, h("dt", { text: k }), h("dd", {}, code(v))))) : null,
    h("p", { class: "dependents" }, h("span", { class: "muted", text: "Dependents: " }),
      dependents.length ? dependents.join(", ") : muted(svc.builtin ? "no job names it (all jobs count)" : "none")),
    r ? readinessEl(r) : muted("Readiness not loaded yet."),
  );
}

function readinessEl(r) {
  const box = h("div", { class: `readiness ${r.ready ? "ready" : "blocked"}`, "data-ready": String(r.ready) });
  if (r.blockers.length) {
    box.append(h("p", { class: "cut-head", text: `A restart now would cut (window ${r.window}):` }),
      h("ul", { class: "blockers" }, r.blockers.map(blockerEl)));
  } else {
    box.append(h("p", { class: "safe", text: "✓ A restart now would cut: nothing — safe to restart." }));
  }
  if (r.wedged_holds.length) {
    box.append(h("p", { class: "muted", text: "Wedged holds (past their TTL, blocking nothing):" }),
      h("ul", { class: "wedged" }, r.wedged_holds.map((hd) =>
        h("li", {}, h("span", { class: "mono", text: hd.name }), " expired ", timeEl(hd.expires_at, { abs: false })))));
  }
  if (r.notes.length) box.append(h("ul", { class: "notes" }, r.notes.map((n) => h("li", { text: n }))));
  return box;
}

function blockerEl(b) {
  if (b.kind === "run") {
    return h("li", {}, "run ",
      h("button", { type: "button", class: "link", "data-action": "goto", "data-target": b.id, text: `#${b.id}` }),
      ` of ${b.job}`, b.started_at ? h("span", { class: "muted" }, ", started ", timeEl(b.started_at, { abs: false })) : null);
  }
  if (b.kind === "fire") return h("li", {}, `${b.job} fires at `, timeEl(b.at));
  if (b.kind === "hold") return h("li", {}, "hold ", h("span", { class: "mono", text: b.name }), ", expires ", timeEl(b.expires_at));
  return h("li", { text: JSON.stringify(b) });
}

function renderHolds() {
  reconcile($("#holds-table tbody"), state.holds, (hd) => hd.name, (hd) => JSON.stringify(hd), holdRow);
  $("#holds-empty").hidden = state.holds.length > 0;
}

function holdRow(hd) {
  return h("tr", { "data-hold": hd.name, "data-wedged": String(hd.wedged) },
    h("th", { scope: "row", class: "mono", text: hd.name }),
    h("td", { text: hd.service }),
    h("td", {}, timeEl(hd.acquired_at)),
    h("td", {}, timeEl(hd.expires_at)),
    h("td", {}, hd.wedged
      ? h("span", { class: "pill pill-warn", title: "past its TTL: listed, blocking nothing", text: "wedged" })
      : h("span", { class: "pill pill-live", title: "a restart of its service waits for it", text: "● live" })),
  );
}

// ---------------------------------------------------------------- hosts
//
// On a shared ledger (PostgreSQL) several hosts serve; the page shows them, and the host of
// each run. On SQLite there is one host, this one: no hosts section and no host column.

const isShared = () => Boolean(state.hosts && state.hosts.shared);

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
function hostsTick(now) {
  if (!isShared() || state.conn !== "live") return;
  const since = now - state.hostsAskedAt;
  if ((state.hostsDue && since >= HOSTS_AFTER_RUNS_MS) || (since >= HOSTS_HEARTBEAT_MS && !document.hidden)) {
    refresh(["hosts"]);
  }
}

function hostByMachine(id) {
  return state.hosts ? state.hosts.hosts.find((x) => x.machine_id === id) || null : null;
}

/** Where a run is or was: its host's name; "any host" while queued unclaimed; else the bare machine id. */
function hostView(run) {
  if (!run.machine_id) {
    if (run.status !== "queued") return { text: "—", any: true, title: "no host ran it" };
    const job = state.jobs.find((j) => j.name === run.job);
    const pins = (job && job.hosts) || [];
    return {
      text: pins.length ? `any of ${pins.join(", ")}` : "any host", any: true,
      title: pins.length ? `queued for the first of ${pins.join(", ")} to claim it` : "queued for whichever host claims it first",
    };
  }
  const host = hostByMachine(run.machine_id);
  if (!host) return { text: run.machine_id, unknown: true, title: `machine ${run.machine_id}: not among the hosts` };
  return { text: host.name, state: host.state, title: `${host.name}: machine ${host.machine_id}, ${host.state}` };
}

/** A run's host; `lostTag`: mark a host lost now (the table does so only for runs in flight). */
function hostEl(run, lostTag = true) {
  const v = hostView(run);
  if (v.any) return muted(v.text, v.title);
  const el = h("span", { class: `host-ref${v.unknown ? " unknown" : ""}`, title: v.title },
    h("span", { class: "host-ref-name", text: v.text }));
  if (v.state === "lost" && lostTag) el.append(" ", tag("⚠ lost", "tag-lost", `the host is ${HOST_STATE.lost.title}`));
  return el;
}

function renderHosts() {
  const shared = isShared();
  $("#hosts").hidden = !shared;
  $("#runs-host-h").hidden = !shared;
  if (!shared) return;
  const me = state.status ? state.status.server_id : null;
  const hosts = state.hosts.hosts;
  reconcile($("#hosts-list"), hosts, (x) => x.machine_id,
    (x) => JSON.stringify([x, Boolean(me) && x.server_id === me]), (x) => hostCard(x, me));
  renderHostsSummary();
}

function renderHostsSummary() {
  if (!isShared()) return;
  const hosts = state.hosts.hosts;
  const leader = state.hosts.leader ? hostByMachine(state.hosts.leader) : null;
  const anyQueued = [...state.runs.values()].filter((r) => r.status === "queued" && !r.machine_id).length;
  $("#hosts-summary").replaceChildren(...[
    `${hosts.length} ${hosts.length === 1 ? "host shares" : "hosts share"} `,
    code(state.hosts.ledger), ". ",
    state.hosts.leader
      ? h("span", {}, h("strong", { text: leader ? leader.name : state.hosts.leader }), " leads the scheduler.")
      : h("span", { class: "warn-text", text: "No host leads right now: the next heartbeat elects one." }),
    anyQueued ? ` ${anyQueued} ${anyQueued === 1 ? "run waits" : "runs wait"} for any host.` : null,
  ].filter(Boolean));
}

function hostCard(host, me) {
  const view = HOST_STATE[host.state] || { icon: "?", title: host.state };
  let title = view.title;
  if (host.state === "lost" && !host.server_id) title = "lost: its server stopped (released its lease) more than a lease ago";
  const n = host.in_flight;
  return h("li", { class: "host", "data-host": host.machine_id, "data-state": host.state, "data-leader": String(host.leader) },
    h("div", { class: "host-head" },
      h("span", { class: "host-name", text: host.name }),
      host.leader ? tag("★ leader", "tag-leader", "its server schedules the fires of every job") : null,
      me && host.server_id === me ? tag("this server", "tag-here", "the server this dashboard talks to") : null),
    h("div", { class: "host-facts" },
      h("span", { class: `badge hs-${host.state}`, title },
        h("span", { class: "icon", "aria-hidden": "true", text: view.icon }), h("span", { class: "label", text: host.state })),
      h("span", { class: "host-beat" }, muted("heartbeat "),
        host.last_heartbeat ? timeEl(host.last_heartbeat, { abs: false }) : muted("never")),
      h("span", { class: `host-flight${n ? "" : " muted"}`, title: "its runs queued or running" },
        `${n} ${n === 1 ? "run" : "runs"} in flight`)),
    h("div", { class: "host-id", title: "machine id", text: host.machine_id }),
  );
}

// ---------------------------------------------------------------- actions

/** Runs fn once at a time per button; aria-busy (not disabled) so the button keeps the focus. */
async function withBusy(btn, fn) {
  if (btn.getAttribute("aria-busy") === "true") return null;
  btn.setAttribute("aria-busy", "true");
  try {
    return await fn();
  } finally {
    btn.removeAttribute("aria-busy");
  }
}

function post(btn, path, what) {
  return withBusy(btn, () => api(path, { method: "POST" }).catch((err) => {
    showError(what, err);
    return null;
  }));
}

/** Run now and cancel answer with the run: show it at once, before its event arrives. */
async function postRun(btn, path, what) {
  const run = await post(btn, path, what);
  if (run) upsertRun(run);
}

async function toggleJob(btn, name, enabled) {
  const verb = enabled ? "disable" : "enable";
  const job = await post(btn, `/api/jobs/${enc(name)}/${verb}`, `Could not ${verb} ${name}`);
  if (!job) return;
  state.jobs = state.jobs.map((j) => (j.name === job.name ? job : j));
  renderJobs();
  refresh(["readiness"]);
}

function onClick(e) {
  const btn = e.target.closest("button[data-action]");
  if (btn) {
    const action = btn.dataset.action;
    const jobRowEl = btn.closest("tr[data-job]");
    const runRowEl = btn.closest("tr[data-run-id]");
    const job = jobRowEl && jobRowEl.dataset.job;
    const id = runRowEl && Number(runRowEl.dataset.runId);
    if (action === "run" && job) postRun(btn, `/api/jobs/${enc(job)}/run`, `Could not run ${job}`);
    else if (action === "toggle" && job) toggleJob(btn, job, jobRowEl.dataset.enabled === "true");
    else if (action === "cancel" && id) postRun(btn, `/api/runs/${id}/cancel`, `Could not cancel run ${id}`);
    else if (action === "select" && id) selectRun(id);
    else if (action === "goto") selectRun(Number(btn.dataset.target));
    else if (action === "older") loadOlder(btn);
    else if (action === "tl-window") setTimelineWindow(btn.dataset.window);
    return;
  }
  if (e.target.closest("button, a, input, select, label")) return;
  const bar = e.target.closest("#tl-layer [data-bar-run]");
  if (bar) {
    selectRun(Number(bar.dataset.barRun));
    return;
  }
  const row = e.target.closest("#runs tr[data-run-id]");
  if (row) selectRun(Number(row.dataset.runId));
}

function onFilterChange() {
  state.filter.job = $("#filter-job").value;
  state.filter.status = $("#filter-status").value;
  renderRuns();
}

// ---------------------------------------------------------------- start

function start() {
  document.addEventListener("click", onClick);
  $("#banner-close").addEventListener("click", dismissErrors);
  $("#filter-job").addEventListener("change", onFilterChange);
  $("#filter-status").addEventListener("change", onFilterChange);
  $("#filters").addEventListener("submit", (e) => e.preventDefault());
  $("#log-follow").addEventListener("change", onFollowChange);
  $("#tl-layer").addEventListener("pointerover", onBarHover);
  if (window.ResizeObserver) new ResizeObserver(scheduleTimeline).observe($("#tl-plot"));
  window.addEventListener("hashchange", onHashChange);
  restoreTimelineWindow();
  state.token = readToken();
  if (!state.token) {
    setConn("unauthorized");
    showAuth("This page has no access token.");
    return;
  }
  setInterval(tick, 1000);
  eventLoop();
}

start();
