// details.js — the selected run's details: a sentence explaining its story when it is not
// the plain one, buttons to the runs it is linked to, and every field of the run.

import { $, h, muted } from "./dom.js";
import { isReceipt, isShared, state } from "./model.js";
import { durationEl, timeEl } from "./clock.js";
import { SIGNALS, statusBadge } from "./labels.js";
import { hostEl, hostView } from "./hosts.js";

const RUN_FIELDS = [
  "id", "job", "status", "trigger", "original_trigger", "attempt", "parent_id", "exit_code", "signal",
  "reason", "resolution", "scheduled_at", "created_at", "started_at", "ended_at", "idempotency_key",
  "machine_id", "boot_id", "monitor_pid", "log_path",
];
const TIME_FIELDS = new Set(["scheduled_at", "created_at", "started_at", "ended_at"]);

export function renderDetails() {
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
