// runs.js — the runs panel: the table of loaded runs (newest first, filtered by job and
// status), its job filter, and which run is marked selected (in the table and the timeline).

import { $, h, muted, reconcile, tag } from "./dom.js";
import { isActive, isReceipt, isShared, matchesFilter, runsNewestFirst, state } from "./model.js";
import { durationEl, timeEl } from "./clock.js";
import { SIGNALS, TRIGGER_LABEL, statusBadge } from "./labels.js";
import { hostEl, hostView, renderHostsSummary } from "./hosts.js";
import { scheduleTimeline } from "./timeline.js";

export function renderRuns() {
  const all = runsNewestFirst();
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
