// jobs.js — the jobs panel: one row per job (command and the settings away from their
// defaults, schedule, time zone, next fire, enabled and paused, last run) with Run now,
// Pause/Unpause and Disable/Enable.

import { $, code, h, muted, reconcile, tag } from "./dom.js";
import { latestRunByJob, pausedOver, state } from "./model.js";
import { timeEl } from "./clock.js";
import { parseDuration, span } from "./time.js";
import { quoteArg, statusBadge } from "./labels.js";
import { renderJobFilter } from "./runs.js";
import { scheduleTimeline } from "./timeline.js";

/** How long the Pause button pauses a job for (`stead job pause NAME --for ...` chooses any). */
const PAUSE_FOR = "1h";

export function renderJobs() {
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
  const attrs = { "data-job": job.name, "data-enabled": String(enabled), "data-paused": String(Boolean(job.paused_until)) };
  return h("tr", { ...attrs, class: enabled ? null : "disabled" },
    h("th", { scope: "row" }, h("div", { class: "job-name", text: job.name }), jobMeta(job)),
    h("td", {}, scheduleEl(job)),
    h("td", {}, job.tz ? job.tz : job.schedule_kind === "cron" ? muted("local", "the machine's time zone") : muted("—")),
    h("td", {}, nextFireEl(job, enabled)),
    h("td", {}, stateEl(job, enabled)),
    h("td", {}, lastRun ? lastRunEl(lastRun) : muted("—", "no run of this job among the loaded runs")),
    h("td", { class: "actions" },
      h("button", { type: "button", "data-action": "run", text: "Run now" }),
      pauseButton(job),
      h("button", { type: "button", "data-action": "toggle", text: enabled ? "Disable" : "Enable" })),
  );
}

/** Unpause for a paused job; Pause for one that fires or runs after others (a pause holds only those). */
function pauseButton(job) {
  if (job.paused_until) {
    return h("button", { type: "button", "data-action": "pause", text: "Unpause", title: "End the pause: its next fire (or after-run) runs" });
  }
  if (job.schedule_kind === "manual" && !(job.after || []).length) return null;
  const how = span(parseDuration(PAUSE_FOR));
  return h("button", {
    type: "button", "data-action": "pause", "data-for": PAUSE_FOR, text: `Pause ${how}`,
    title: `Skip its fires and after-runs for ${how} (each recorded as skipped); Run now still runs it`,
  });
}

function stateEl(job, enabled) {
  const pill = h("span", { class: `pill ${enabled ? "pill-on" : "pill-off"}`, text: enabled ? "enabled" : "disabled" });
  if (!job.paused_until) return pill;
  return [pill, " ",
    h("span", { class: "pill pill-warn", text: "paused", title: "its fires and after-runs until then are recorded skipped" }),
    h("div", { class: "sub" }, "until ", timeEl(job.paused_until))];
}

/** The next fire, and whether the pause passes over it. */
function nextFireEl(job, enabled) {
  if (!job.next_fire_at) return muted(enabled ? "—" : "— (disabled)");
  const skipped = pausedOver(job, Date.parse(job.next_fire_at));
  return [timeEl(job.next_fire_at), skipped ? h("div", { class: "sub", text: "skipped: paused" }) : null];
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
    job.retries && [`retries ${job.retries}`, retryTitle(job)],
    ...(job.after || []).map((up) => [`after ${up}`, `runs after each success of ${up}`]),
    job.queue && [`queue ${job.queue}`, `its runs share the limit of queue ${job.queue}`],
  ].filter(Boolean).map(([text, title]) => tag(text, "tag-plain", title));
  if (tags.length) meta.append(h("div", { class: "tags" }, tags));
  return meta;
}

function retryTitle(job) {
  const first = job.retry_delay || "30s";
  const most = job.retry_max_delay || "1h";
  return `after a genuine failure, retried up to ${job.retries} times: first after ${first}, doubling up to ${most}, ±20 %`;
}

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
