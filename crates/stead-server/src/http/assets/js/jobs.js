// jobs.js — the jobs panel: one row per job (command and the settings away from their
// defaults, schedule, time zone, next fire, enabled, last run) with Run now and Disable/Enable.

import { $, code, h, muted, reconcile, tag } from "./dom.js";
import { latestRunByJob, state } from "./model.js";
import { timeEl } from "./clock.js";
import { statusBadge } from "./labels.js";
import { renderJobFilter } from "./runs.js";
import { scheduleTimeline } from "./timeline.js";

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
  return h("tr", { "data-job": job.name, "data-enabled": String(enabled), class: enabled ? null : "disabled" },
    h("th", { scope: "row" }, h("div", { class: "job-name", text: job.name }), jobMeta(job)),
    h("td", {}, scheduleEl(job)),
    h("td", {}, job.tz ? job.tz : job.schedule_kind === "cron" ? muted("local", "the machine's time zone") : muted("—")),
    h("td", {}, job.next_fire_at ? timeEl(job.next_fire_at) : muted(enabled ? "—" : "— (disabled)")),
    h("td", {}, h("span", { class: `pill ${enabled ? "pill-on" : "pill-off"}`, text: enabled ? "enabled" : "disabled" })),
    h("td", {}, lastRun ? lastRunEl(lastRun) : muted("—", "no run of this job among the loaded runs")),
    h("td", { class: "actions" },
      h("button", { type: "button", "data-action": "run", text: "Run now" }),
      h("button", { type: "button", "data-action": "toggle", text: enabled ? "Disable" : "Enable" })),
  );
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
  ].filter(Boolean).map(([text, title]) => tag(text, "tag-plain", title));
  if (tags.length) meta.append(h("div", { class: "tags" }, tags));
  return meta;
}

const quoteArg = (a) => (/^[\w@%+=:,./-]+$/.test(a) ? a : `'${a.replace(/'/g, "'\\''")}'`);

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
