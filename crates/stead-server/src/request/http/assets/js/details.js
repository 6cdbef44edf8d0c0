// details.js — the selected run's details: a sentence explaining its story when it is not
// the plain one (what it retries, resumes or follows, what it waits for), buttons to the runs
// it is linked to, its steps (steps.js), its own parameters, and every field of the run
// (those the server leaves out when they do not apply, such as a sleep or a wait, only when
// present).

import { $, h, muted } from "./dom.js";
import { isReceipt, isShared, state } from "./model.js";
import { childWhat, followLink, followers, parentLink } from "./chain.js";
import { durationEl, timeEl, timesIn } from "./clock.js";
import { SIGNALS, paramsText, statusBadge } from "./labels.js";
import { hostEl, hostView } from "./hosts.js";
import { renderSteps } from "./steps.js";

const RUN_FIELDS = [
  "id", "job", "status", "trigger", "original_trigger", "attempt", "parent_id", "exit_code", "signal",
  "reason", "resolution", "scheduled_at", "created_at", "started_at", "ended_at", "idempotency_key",
  "machine_id", "boot_id", "monitor_pid", "log_path",
];
/** Fields the server leaves out when they do not apply: shown only when present. */
const OPTIONAL_FIELDS = ["queue", "waiting", "not_before", "followed_by", "caught_up", "slept_ms", "waited_ms", "wait_note"];
const TIME_FIELDS = new Set(["scheduled_at", "created_at", "started_at", "ended_at", "not_before"]);
const WORD_FIELDS = new Set(["reason", "resolution", "waiting", "caught_up", "wait_note"]);

export function renderDetails() {
  const run = state.runs.get(state.selectedId);
  $("#details-empty").hidden = Boolean(run);
  $("#details-body").hidden = !run;
  if (!run) return;
  const shared = isShared();
  $("#details-h").replaceChildren(`Run #${run.id} `, h("span", { class: "job-cell", text: run.job }), " ", statusBadge(run.status),
    ...(shared ? [h("span", { class: "details-host" }, hostView(run).any ? null : "on ", hostEl(run))] : []));
  const up = parentLink(run, state.runs, state.jobs);
  const next = followLink(run, followers(state.runs), state.runs);
  $("#details-explain").replaceChildren(...explain(run, up));
  $("#run-fields").replaceChildren(
    ...RUN_FIELDS.flatMap((f) => [
      shared && f === "machine_id" ? field("host", hostEl(run)) : null,
      field(f, fieldValue(run, f)),
    ]).filter(Boolean),
    ...OPTIONAL_FIELDS.filter((f) => run[f] !== null && run[f] !== undefined).map((f) => field(f, fieldValue(run, f))),
    ...(run.params ? paramsFields(run.params) : []),
    field("duration", durationEl(run)),
  );
  $("#details-nav").replaceChildren(...relatedRuns(run, up, next));
  renderSteps(run);
}

const field = (name, value, wide) => h("div", { class: wide ? "wide" : null }, h("dt", { text: name }), h("dd", {}, value));

function fieldValue(run, f) {
  const v = run[f];
  if (v === null || v === undefined) return muted("null");
  if (f === "status") return statusBadge(v);
  if (TIME_FIELDS.has(f)) return timeEl(v);
  if (f === "signal" && SIGNALS[v]) return `${v} (${SIGNALS[v]})`;
  if (WORD_FIELDS.has(f)) return timesIn(v);
  return h("span", { class: typeof v === "string" ? "mono" : null, text: String(v) });
}

/** The run's own environment, one `K=V` a line, and its arguments as a shell would quote them. */
function paramsFields(params) {
  const { env, args } = paramsText(params);
  return [
    env.length ? field("params.env", h("div", { class: "params" }, env.map((line) => h("code", { text: line }))), true) : null,
    args ? field("params.args", h("code", { class: "params", text: args }), true) : null,
  ].filter(Boolean);
}

/** The run's story in a sentence (words and <time>s), when it is not the plain one. */
function explain(run, up) {
  if (isReceipt(run)) return ["Cut short, then closed as succeeded: its landed check proved the work landed, so nothing reran."];
  if (run.status === "interrupted") {
    return [run.resolution
      ? "Cut short by something other than itself — not a failure. Its debt is settled (see resolution)."
      : "Cut short by something other than itself — not a failure. Still owed: stead resumes it once, after the resume delay."];
  }
  const story = [];
  if (up && up.kind === "resume") story.push(`Resumes cut run #${up.id}, with the same idempotency key.`);
  if (up && up.kind === "retry") story.push(`Retries failed run #${up.id}: attempt ${run.attempt}, with the same idempotency key.`);
  if (up && up.kind === "after") story.push(afterStory(run, up));
  if (run.trigger === "catch_up") {
    story.push(run.status === "skipped" ? "Missed fires that were not run, recorded with the reason." : "Makes up for a fire missed while stead was down or the machine slept.");
  }
  if (run.status === "queued" && run.waiting) story.push(" Waits for ", timesIn(run.waiting), ".");
  return story;
}

function afterStory(run, up) {
  const upstream = `run #${up.id}${up.sub ? ` ${up.sub}` : ""}`;
  return run.status === "skipped"
    ? `Not run after ${upstream} succeeded (see the reason).`
    : `Started because ${upstream} succeeded (this job runs after it).`;
}

/** Buttons to the run it came from, the run that carries it on, and the runs that name it as their parent. */
function relatedRuns(run, up, next) {
  const links = [];
  if (up) links.push([`Show ${up.what}, #${up.id}`, up.id]);
  if (next) links.push([`Show ${next.what}, #${next.id}`, next.id]);
  for (const other of state.runs.values()) {
    if (other.parent_id !== run.id || links.some(([, id]) => id === other.id)) continue;
    links.push([`Show run #${other.id}, ${childWhat(other)}`, other.id]);
  }
  return links.map(([text, id]) => h("button", { type: "button", class: "small", "data-action": "goto", "data-target": id, text }));
}
