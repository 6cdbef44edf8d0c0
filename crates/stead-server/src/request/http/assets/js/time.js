// time.js — time and duration as text, and back: absolute local times (Intl, the browser's
// locale and zone), relative times ("in 5 min", "3 s ago"), spans, run durations, lease
// expiry, "1h30m" → milliseconds, and the RFC 3339 times within the server's words.
// Pure: no DOM, so node can import it.

const fmtTime = new Intl.DateTimeFormat(undefined, { hour: "2-digit", minute: "2-digit", second: "2-digit" });
const fmtDay = new Intl.DateTimeFormat(undefined, { month: "short", day: "numeric", hour: "2-digit", minute: "2-digit", second: "2-digit" });
const fmtYear = new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "medium" });
const fmtFull = new Intl.DateTimeFormat(undefined, { dateStyle: "full", timeStyle: "long" });
const fmtHM = new Intl.DateTimeFormat(undefined, { hour: "2-digit", minute: "2-digit" });
const fmtDayTick = new Intl.DateTimeFormat(undefined, { month: "short", day: "numeric" });

/** A time as short as it can be: the time of day today, the day this year, else the date. */
export function absText(t, nowMs = Date.now()) {
  const d = new Date(t);
  const now = new Date(nowMs);
  if (d.toDateString() === now.toDateString()) return fmtTime.format(d);
  return d.getFullYear() === now.getFullYear() ? fmtDay.format(d) : fmtYear.format(d);
}

/** A time in full, for tooltips. */
export const fullText = (t) => fmtFull.format(t);
/** Hours and minutes ("14:05"). */
export const hmText = (t) => fmtHM.format(t);
/** Month and day ("Mar 3"). */
export const dayText = (t) => fmtDayTick.format(t);

/** A span of time in words: "12 s", "3 min", "2 h 5 min", "3 d 4 h". */
export function span(d) {
  const s = Math.floor(d / 1000);
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min`;
  const hr = Math.floor(m / 60);
  if (hr < 24) return m % 60 ? `${hr} h ${m % 60} min` : `${hr} h`;
  const days = Math.floor(hr / 24);
  return hr % 24 ? `${days} d ${hr % 24} h` : `${days} d`;
}

export function relText(t, now = Date.now()) {
  const d = t - now;
  if (Math.abs(d) < 1000) return "now";
  return d > 0 ? `in ${span(d)}` : `${span(-d)} ago`;
}

/** A run's duration; `live` ones (still running) in whole seconds so the tick reads calmly. */
export function durText(d, live) {
  d = Math.max(0, d);
  if (d < 10000 && !live) return `${(d / 1000).toFixed(1)} s`;
  const s = Math.floor(d / 1000);
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min ${s % 60} s`;
  return `${Math.floor(m / 60)} h ${m % 60} min`;
}

/** When a lease expires; one past its expiry is renewed by the heartbeat while the server is `live`. */
export function leaseText(t, now, live) {
  if (t > now) return `in ${span(t - now)}`;
  return live ? "renewed by the heartbeat (server live)" : `${span(now - t)} ago`;
}

/** "90s", "1h30m" → milliseconds. */
export function parseDuration(text) {
  const units = { d: 86400000, h: 3600000, m: 60000, s: 1000 };
  let total = 0;
  for (const [, n, u] of String(text || "").matchAll(/(\d+)\s*([dhms])/g)) total += Number(n) * units[u];
  return total;
}

/** An RFC 3339 time as the server writes one into words ("paused until 2026-12-02T06:21:54.905Z"). */
const RFC3339 = /\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:\d\d)/g;

/** Splits words at the RFC 3339 times in them: their strings, and `{ iso }` for each time. */
export function splitTimes(text) {
  const parts = [];
  let at = 0;
  for (const m of text.matchAll(RFC3339)) {
    if (m.index > at) parts.push(text.slice(at, m.index));
    parts.push({ iso: m[0] });
    at = m.index + m[0].length;
  }
  if (at < text.length) parts.push(text.slice(at));
  return parts;
}

/** Words with their RFC 3339 times written by `timeText` (a time in ms → text). */
export const localTimes = (text, timeText = absText) =>
  splitTimes(text).map((p) => (typeof p === "string" ? p : timeText(Date.parse(p.iso)))).join("");
