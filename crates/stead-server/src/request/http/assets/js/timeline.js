// timeline.js — the runs timeline: one lane per job, time running left to right up to "now"
// (TL_PAST of the width), then a strip that shows the fires coming next. Bars sit on one
// layer, positioned in percent of a time frame fixed when the picture is drawn; the 1 s tick
// slides that layer left and grows the bars of live runs, and once it has slid TL_REANCHOR %
// the picture is drawn afresh (at most once per animation frame, like every data change).
// A resume or a retry is linked to the run it carries on by an arc; a fire a pause passes
// over is drawn dashed; a sleep of the machine is a hatched band across every lane.

import { $, h } from "./dom.js";
import {
  isActive, isReceipt, isShared, matchesFilter, oldestFirst, oldestRun, pausedOver, runSpan, skippedLines, state,
} from "./model.js";
import { parentLink } from "./chain.js";
import { absText, dayText, durText, hmText, localTimes, relText } from "./time.js";
import { STATUS_VIEW, TRIGGER_LABEL } from "./labels.js";
import { hostView } from "./hosts.js";

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
const TL_ORDER = ["running", "queued", "succeeded", "failed", "cancelled", "interrupted", "skipped"];
/** The runs linked by an arc to the run they carry on, and their glyph. */
const TL_CHAIN_GLYPH = { resume: "↻", retry: "↺" };

/** The drawn picture: its frame (t0 = "now" when drawn), and the bars that grow with the clock. */
const tl = { t0: null, from: 0, spanMs: 1, live: [], queued: false };

export function scheduleTimeline() {
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


function renderTimeline() {
  if (!state.loaded.has("runs") || !state.loaded.has("jobs")) return; // "Loading…" until both are in
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
  runs.sort(oldestFirst);
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
    const paused = job && job.paused_until ? ` (paused until ${absText(Date.parse(job.paused_until))})` : "";
    return h("div", { class: `tl-name${off ? " off" : ""}`, text: name, title: `${name}${off ? " (disabled)" : job ? paused : " (removed)"}` });
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
    const label = h("span", { class: `tl-tick${midnight ? " day" : ""}`, text: midnight && win.step >= 3600000 ? dayText(d) : hmText(d) });
    label.style.left = `${x}%`;
    label.style.top = `${lanes.length * TL_LANE}px`;
    items.push(label);
  }
  for (const sleep of state.sleeps) items.push(...sleepBand(sleep, lanes.length, until));
  const drawn = new Map();
  for (const run of runs) {
    const lane = laneOf.get(run.job);
    if (lane === undefined) continue;
    drawn.set(run.id, run);
    items.push(runBar(run, lane, now));
  }
  for (const run of drawn.values()) {
    const glyph = TL_CHAIN_GLYPH[run.trigger];
    if (glyph) items.push(...chainMarks(run, drawn.get(run.parent_id), laneOf.get(run.job), now, glyph));
  }
  for (const name of lanes) {
    const job = jobs.get(name);
    const t = job && job.enabled !== false && job.next_fire_at ? Date.parse(job.next_fire_at) : NaN;
    if (!(t > now && t <= ahead)) continue;
    const paused = pausedOver(job, t);
    const fire = h("div", { class: `tl-fire${paused ? " paused" : ""}`, "data-fire-job": name, "data-t": t, title: fireTitle(name, t, now) });
    fire.style.left = `${tlPct(t)}%`;
    fire.style.top = `${laneOf.get(name) * TL_LANE}px`;
    items.push(fire);
  }
  layer.replaceChildren(...items);
}

/** A sleep of the machine: a band across every lane, from when it began to when it was noticed. */
function sleepBand(sleep, laneCount, until) {
  const start = Date.parse(sleep.started_at);
  const end = Date.parse(sleep.ended_at);
  if (!(end >= tl.from && start <= until) || laneCount === 0) return [];
  const host = isShared() ? ` (${sleep.host})` : "";
  const band = h("div", {
    class: "tl-sleep",
    "data-sleep": sleep.id,
    title: `the machine slept${host}: ${absText(start)} – ${absText(end)} (${durText(sleep.duration_ms, false)})`,
  });
  tlPlace(band, Math.max(start, tl.from), end);
  band.style.height = `${laneCount * TL_LANE}px`;
  return [band];
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

/** A resume or a retry: its glyph at its start, and an arc from the end of the run it carries on, when drawn. */
function chainMarks(run, parent, lane, now, glyph) {
  const [start] = runSpan(run, now);
  const top = `${lane * TL_LANE}px`;
  const marks = [];
  let mid = tlPct(start);
  if (parent) {
    const [, parentEnd] = runSpan(parent, now);
    const a = tlPct(Math.min(parentEnd, start));
    const half = (mid - a) / 2;
    mid = a + half;
    const arc = h("div", { class: `tl-link tl-${run.trigger}` });
    arc.style.left = `calc(${mid}% - max(8px, ${half}%))`;
    arc.style.width = `max(16px, ${half * 2}%)`;
    arc.style.top = top;
    marks.push(arc);
  }
  const mark = h("span", { class: `tl-glyph tl-${run.trigger}`, text: glyph });
  mark.style.left = `${mid}%`;
  mark.style.top = top;
  marks.push(mark);
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
  const oldest = oldestRun();
  if (state.hasOlder && oldest && Date.parse(oldest.created_at) > tl.from) text += " Older runs are not loaded.";
  let next = null;
  for (const name of lanes) {
    const job = jobs.get(name);
    const t = job && job.enabled !== false && job.next_fire_at ? Date.parse(job.next_fire_at) : NaN;
    if (t > now && !pausedOver(job, t) && (!next || t < next[1])) next = [name, t];
  }
  if (next) text += ` Next fire: ${next[0]} at ${absText(next[1])}.`;
  return text;
}

function barTitle(run, now) {
  const view = STATUS_VIEW[run.status] || { label: run.status };
  const status = run.status === "interrupted" ? "cut (interrupted, not a failure)" : view.label;
  const up = parentLink(run, state.runs, state.jobs);
  const trigger = up ? up.title : TRIGGER_LABEL[run.trigger] || run.trigger;
  const lines = [`Run #${run.id} · ${run.job}`, `${status} · ${trigger}`];
  if (isShared()) {
    const where = hostView(run);
    lines.push(where.any ? where.text : `on ${where.text}`);
  }
  if (run.status === "skipped") {
    // The fire it stands for and why it was not run (coalesced into catch-up run N, ...).
    lines.push(...skippedLines(run, (t) => absText(t)));
    return lines.join("\n");
  }
  if (!run.started_at) {
    lines.push(`created ${absText(Date.parse(run.created_at))}, not started`);
    if (run.status === "queued" && run.waiting) lines.push(`waits for ${localTimes(run.waiting)}`);
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

function fireTitle(name, t, now) {
  const job = state.jobs.find((j) => j.name === name);
  const paused = pausedOver(job, t) ? `\nnot run: the job is paused until ${absText(Date.parse(job.paused_until))}` : "";
  return `next fire of ${name}: ${absText(t)} (${relText(t, now)})${paused}`;
}

/** Titles read the clock when hovered, so a running bar's duration is current. */
export function onBarHover(e) {
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
export function timelineTick(now) {
  if (tl.t0 === null || tl.queued) return;
  const shift = ((now - tl.t0) / tl.spanMs) * 100;
  if (shift < 0 || shift > TL_REANCHOR) {
    scheduleTimeline();
    return;
  }
  $("#tl-layer").style.transform = `translateX(${-shift}%)`;
  for (const { el, start } of tl.live) tlPlace(el, start, now);
}

export function setTimelineWindow(key) {
  if (!TL_WINDOWS[key]) return;
  state.tlWindow = key;
  try { localStorage.setItem(TL_WINDOW_KEY, key); } catch (_) { /* no storage: the choice lasts the page */ }
  for (const b of document.querySelectorAll('[data-action="tl-window"]')) {
    b.setAttribute("aria-pressed", String(b.dataset.window === key));
  }
  scheduleTimeline();
}

export function restoreTimelineWindow() {
  let key = null;
  try { key = localStorage.getItem(TL_WINDOW_KEY); } catch (_) { /* no storage */ }
  setTimelineWindow(TL_WINDOWS[key] ? key : "1h");
}
