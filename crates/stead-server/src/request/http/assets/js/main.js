// main.js — the stead web dashboard's entry point, and its wiring.
//
// Reads the access token from the URL fragment (#token=…), loads jobs, runs, services,
// holds, readiness, hosts, queues and notifiers from the HTTP API, and keeps them current
// from the server's event stream (/api/events, read with fetch so it can carry the Bearer
// header). The only timer is a 1 s clock tick that refreshes relative times and running
// durations in place (and now and then, on a shared ledger, the hosts' heartbeats and runs in
// flight, and, while events wait to be delivered, the notifiers).
// Every piece of data reaches the page through textContent / createElement, never HTML.

import { $ } from "./dom.js";
import { currentToken, dismissErrors, forgetToken, readToken, setToken, whenUnauthorized } from "./api.js";
import { abortEvents, eventLoop } from "./sse.js";
import { state } from "./model.js";
import { refreshTimes } from "./clock.js";
import { applyRun, clockCrossings, hostsTick, loadAll, notifiersTick, refresh } from "./load.js";
import { renderStatus, setConn, showAuth } from "./status.js";
import { closeLog, onFollowChange } from "./log.js";
import { onBarHover, restoreTimelineWindow, scheduleTimeline, timelineTick } from "./timeline.js";
import { onClick, onFilterChange } from "./actions.js";

/** The server refused the token: forget it, stop the stream and the log, and say so. */
function unauthorized() {
  if (state.conn === "unauthorized") return;
  forgetToken();
  setConn("unauthorized");
  abortEvents();
  closeLog();
  showAuth("The server refused this dashboard's access token (401).");
}

/** A dashboard URL pasted into this tab only changes the fragment: start over with its token. */
function onHashChange() {
  if (!new URLSearchParams(location.hash.slice(1)).get("token")) return;
  const token = readToken();
  if (token && token !== currentToken()) location.reload();
}

/** An event of the stream: the server's status, a run, or a change that calls for refetches. */
function onEvent(type, data) {
  let body;
  try { body = JSON.parse(data); } catch (_) { return; }
  if (type === "hello") {
    state.status = body;
    renderStatus();
  } else if (type === "run") {
    applyRun(body);
  } else if (type === "changed") {
    refresh(["jobs", "services", "holds", "readiness", "hosts", "queues", "notifiers", "sleeps"]);
  } else if (type === "lagged") {
    loadAll();
  }
}

function tick() {
  const now = Date.now();
  refreshTimes(now);
  timelineTick(now);
  clockCrossings(now);
  hostsTick(now);
  notifiersTick(now);
}

function start() {
  whenUnauthorized(unauthorized);
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
  setToken(readToken());
  if (!currentToken()) {
    setConn("unauthorized");
    showAuth("This page has no access token.");
    return;
  }
  setInterval(tick, 1000);
  eventLoop({
    conn: setConn,
    load: loadAll,
    event: onEvent,
    stopped: () => state.conn === "unauthorized",
  });
}

start();
