// log.js — the selected run's log: read once, followed as it grows while the run is live
// (the Follow box), and read to its end once the run has ended.

import { $ } from "./dom.js";
import { request, showError } from "./api.js";
import { isActive, state } from "./model.js";

let logSession = null;

export function closeLog() {
  if (!logSession) return;
  logSession.closed = true;
  if (logSession.ctrl) logSession.ctrl.abort();
  logSession = null;
}

export function openLog(id) {
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

/** The shown run changed (an event): bring its log up to date. */
export function logRunChanged() {
  if (logSession) pumpLog(logSession);
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

/** The Follow box: stop following, or follow (and scroll to the end) again. */
export function onFollowChange() {
  const s = logSession;
  if (!s) return;
  if (!$("#log-follow").checked) {
    if (s.following && s.ctrl) s.ctrl.abort();
  } else {
    $("#log-text").scrollTop = $("#log-text").scrollHeight;
    pumpLog(s);
  }
}
