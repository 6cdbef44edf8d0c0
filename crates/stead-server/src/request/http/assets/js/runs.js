// runs.js — the runs panel: the table of loaded runs (newest first, filtered by job and
// status; each linked to the run it came from and the one that carries it on, and a queued
// one saying what it waits for), its job filter, and which run is marked selected (in the
// table and the timeline).

import { $, h, muted, reconcile, tag } from "./dom.js";
import { isActive, isReceipt, isShared, matchesFilter, runsNewestFirst, state } from "./model.js";
import { followLink, followers, parentLink } from "./chain.js";
import { durationEl, timeEl, timesIn } from "./clock.js";
import { SIGNALS, TRIGGER_LABEL, statusBadge } from "./labels.js";
import { hostEl, hostView, renderHostsSummary } from "./hosts.js";
import { scheduleTimeline } from "./timeline.js";

export function renderRuns() {
  const all = runsNewestFirst();
  const shown = all.filter(matchesFilter);
  const shared = isShared();
  const index = followers(state.runs);
  const rows = shown.map((run) => ({
    run, up: parentLink(run, state.runs, state.jobs), next: followLink(run, index, state.runs),
  }));
  reconcile($("#runs tbody"), rows, (row) => String(row.run.id),
    (row) => JSON.stringify([row, shared && hostView(row.run)]), runRow);
  markSelected();
  const empty = $("#runs-empty");
  empty.hidden = shown.length > 0;
  empty.textContent = all.length ? "No loaded run matches these filters." : "No runs yet.";
  $("#runs-count").textContent = `${shown.length} shown of ${all.length} loaded`;
  $("#load-older").hidden = !state.hasOlder;
  renderHostsSummary(); // it counts the runs waiting for any host
  scheduleTimeline();
}

/** The job filter's options: every job, and the job of every loaded run. */
export function renderJobFilter() {
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

/** A row of the table: the run, where it came from (`up`) and what carries it on (`next`), as chain.js says. */
function runRow({ run, up, next }) {
  return h("tr", { "data-run-id": run.id, "data-status": run.status, "data-trigger": run.trigger, class: "run" },
    h("th", { scope: "row" },
      h("button", { type: "button", class: "link", "data-action": "select", title: `Show run ${run.id}`, text: `#${run.id}` })),
    h("td", { class: "job-cell", text: run.job }),
    h("td", {}, triggerEl(run, up)),
    h("td", { class: "status-cell" }, statusBadge(run.status),
      isActive(run) ? h("button", { type: "button", class: "small", "data-action": "cancel", text: "Cancel" }) : null,
      waitingEl(run)),
    isShared() ? h("td", { class: "host-cell" }, hostEl(run, isActive(run))) : null,
    h("td", {}, run.started_at ? timeEl(run.started_at)
      : h("span", { class: "muted", title: "created; not started" }, timeEl(run.created_at))),
    h("td", { class: "num" }, durationEl(run), exitEl(run)),
    h("td", { class: "reason" }, run.reason ? h("span", { title: run.reason }, timesIn(run.reason, { rel: false })) : muted("—")),
    h("td", { class: "resolution" }, resolutionEl(run, next)),
  );
}

function triggerEl(run, up) {
  const wrap = h("span", { class: "trigger" });
  if (up) {
    wrap.append(tag(up.text, `tag-${up.kind}`, up.title));
    if (up.sub) wrap.append(h("span", { class: "sub", text: up.sub }));
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

/** What a queued run waits for, under its status: a place in a queue, a retry's delay until a time. */
function waitingEl(run) {
  if (run.status !== "queued" || !run.waiting) return null;
  return h("div", { class: "sub waiting" }, "waits for ", timesIn(run.waiting));
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

/** How the run's story ends: the run that carries it on, a receipt, a debt still owed, or the resolution. */
function resolutionEl(run, next) {
  const wrap = h("span", {});
  // "resumed as run N" says no more than the link to run N does.
  const said = next && (run.resolution || "").startsWith(`resumed as run ${next.id}`);
  if (next) {
    wrap.append(h("button", {
      type: "button", class: "link follow", "data-action": "goto", "data-target": next.id,
      text: next.text, title: said ? run.resolution : next.title,
    }));
  }
  if (isReceipt(run)) {
    wrap.append(tag("✓ landed by receipt", "tag-receipt", `${run.resolution}: its landed check proved the work landed`));
  } else if (run.status === "interrupted" && !run.resolution) {
    wrap.append(tag("owed", "tag-owed", "cut, not failed: stead resumes it once, after the resume delay"));
  } else if (run.resolution && !said) {
    wrap.append(h("span", { class: "res-text", text: run.resolution, title: run.resolution }));
  } else if (!next) {
    wrap.append(muted("—"));
  }
  return wrap;
}

/** Marks the selected run's row and timeline bar. */
export function markSelected() {
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
