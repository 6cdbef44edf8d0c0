// actions.js — what the user does: Run now, Cancel, Disable/Enable, Pause/Unpause, selecting
// a run, loading older runs, the filters and the timeline's window. Buttons are found by
// data-action on one click listener for the whole page.

import { $ } from "./dom.js";
import { api, enc, showError } from "./api.js";
import { PAGE, mergeRuns, state, storeRun } from "./model.js";
import { applyJob, applyRun, scheduleRender } from "./load.js";
import { markSelected, renderRuns } from "./runs.js";
import { renderDetails } from "./details.js";
import { openLog } from "./log.js";
import { setTimelineWindow } from "./timeline.js";

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

/** POSTs, with `body` as JSON when given; answers the answer, or null once the error is shown. */
function post(btn, path, what, body) {
  const opts = body === undefined ? { method: "POST" }
    : { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) };
  return withBusy(btn, () => api(path, opts).catch((err) => {
    showError(what, err);
    return null;
  }));
}

/** Run now and cancel answer with the run: show it at once, before its event arrives. */
async function postRun(btn, path, what) {
  const run = await post(btn, path, what);
  if (run) applyRun(run);
}

/** The job actions answer with the job: show it at once, before the change event's refetch. */
async function postJob(btn, path, what, body) {
  const job = await post(btn, path, what, body);
  if (job) applyJob(job);
}

function toggleJob(btn, name, enabled) {
  const verb = enabled ? "disable" : "enable";
  return postJob(btn, `/api/jobs/${enc(name)}/${verb}`, `Could not ${verb} ${name}`);
}

/** Pause or Unpause, as Disable/Enable: one action, so the focus stays on the button. */
function pauseJob(btn, name, paused) {
  if (paused) return postJob(btn, `/api/jobs/${enc(name)}/unpause`, `Could not unpause ${name}`);
  return postJob(btn, `/api/jobs/${enc(name)}/pause`, `Could not pause ${name}`, { for: btn.dataset.for });
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

/** Shows a run's details and log (fetching the run first when it is not loaded). */
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

export function onClick(e) {
  const btn = e.target.closest("button[data-action]");
  if (btn) {
    const action = btn.dataset.action;
    const jobRowEl = btn.closest("tr[data-job]");
    const runRowEl = btn.closest("tr[data-run-id]");
    const job = jobRowEl && jobRowEl.dataset.job;
    const id = runRowEl && Number(runRowEl.dataset.runId);
    if (action === "run" && job) postRun(btn, `/api/jobs/${enc(job)}/run`, `Could not run ${job}`);
    else if (action === "toggle" && job) toggleJob(btn, job, jobRowEl.dataset.enabled === "true");
    else if (action === "pause" && job) pauseJob(btn, job, jobRowEl.dataset.paused === "true");
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

export function onFilterChange() {
  state.filter.job = $("#filter-job").value;
  state.filter.status = $("#filter-status").value;
  renderRuns();
}
