// clock.js — elements that show time and move with the clock: <time> elements (absolute
// local time and a relative one), words with such times in them, running durations, and the
// 1 s refresh of both in place.

import { h, muted } from "./dom.js";
import { state } from "./model.js";
import { absText, durText, fullText, leaseText, relText, splitTimes } from "./time.js";

const serverLive = () => state.conn === "live";

/** A <time> with the absolute local time and, updated by the tick, the relative one. */
export function timeEl(iso, { abs = true, rel = true, mode = "rel" } = {}) {
  if (!iso) return muted("—");
  const t = Date.parse(iso);
  if (Number.isNaN(t)) return h("span", { text: iso });
  const el = h("time", { datetime: iso, title: `${fullText(t)}\n${iso}` });
  if (abs) el.append(h("span", { class: "abs", text: absText(t) }), " ");
  if (rel) {
    const text = mode === "lease" ? leaseText(t, Date.now(), serverLive()) : relText(t);
    el.append(h("span", { class: "rel", "data-rel": mode, "data-t": t, text }));
  }
  return el;
}

/** The server's words, each RFC 3339 time in them a <time> (`opts` as timeEl's). */
export function timesIn(text, opts) {
  return h("span", { class: "words" }, splitTimes(text).map((p) => (typeof p === "string" ? p : timeEl(p.iso, opts))));
}

/** A run's duration: fixed once it ended, counting (by the tick) while it runs. */
export function durationEl(run) {
  if (!run.started_at) return muted("—");
  const start = Date.parse(run.started_at);
  if (run.ended_at) return h("span", { text: durText(Date.parse(run.ended_at) - start, false) });
  if (run.status === "running") {
    return h("span", { "data-rel": "dur", "data-t": start, text: durText(Date.now() - start, true) });
  }
  return muted("—");
}

/** From the 1 s tick: relative times, leases and running durations, rewritten where they changed. */
export function refreshTimes(now) {
  for (const el of document.querySelectorAll("[data-rel]")) {
    const t = Number(el.dataset.t);
    let text;
    if (el.dataset.rel === "dur") text = durText(now - t, true);
    else if (el.dataset.rel === "lease") text = leaseText(t, now, serverLive());
    else text = relText(t, now);
    if (el.textContent !== text) el.textContent = text;
  }
}
