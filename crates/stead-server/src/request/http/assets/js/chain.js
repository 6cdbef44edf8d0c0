// chain.js — how runs link into chains: a retry to the failed run it retries, a resume to
// the cut run it resumes, an after-run to the upstream run whose success started it, and a
// run to the one that carries it on (its retry or its resume). Pure: no DOM, so node can
// import it.

import { TRIGGER_LABEL } from "./labels.js";

/** The triggers of a run that carries its parent on (the parent's `followed_by`). */
const CARRIES_ON = new Set(["retry", "resume"]);

/**
 * The loaded runs that carry another on, by the id of the run each carries on. The server
 * says so in the parent's `followed_by`, but the parent's row is sent again only when it is
 * read again: this is how the page knows as soon as the retry or resume arrives.
 */
export function followers(runs) {
  const index = new Map();
  for (const r of runs.values()) {
    if (r.parent_id === null || r.parent_id === undefined || !CARRIES_ON.has(r.trigger)) continue;
    const known = index.get(r.parent_id);
    if (known === undefined || r.id < known) index.set(r.parent_id, r.id);
  }
  return index;
}

/** The id of the run that carries `run` on, or null; `index` is followers()'s. */
const followerId = (run, index) => run.followed_by ?? index.get(run.id) ?? null;

/** The job of the run an after-run follows: that run's when loaded, else its job's only `after`. */
function upstreamJob(run, runs, jobs) {
  const parent = runs.get(run.parent_id);
  if (parent) return parent.job;
  const job = jobs.find((j) => j.name === run.job);
  const after = (job && job.after) || [];
  return after.length === 1 ? after[0] : null;
}

/**
 * Where a resume, a retry or an after-run came from, or null: `{ id, kind, text, sub, title,
 * what }`. `text` is short, for a tag ("↺ retry of #3"), `sub` a line under it or null;
 * `title` says it in full; `what` names that run in a button's words ("the failed run it
 * retries").
 */
export function parentLink(run, runs, jobs) {
  const id = run.parent_id;
  if (id === null || id === undefined) return null;
  if (run.trigger === "resume") {
    const first = run.original_trigger ? `, first ${TRIGGER_LABEL[run.original_trigger] || run.original_trigger}` : "";
    return {
      id, kind: "resume", text: `↻ resumes #${id}`, sub: null,
      title: `a resume of cut run ${id}${first}`, what: "the run it resumes",
    };
  }
  if (run.trigger === "retry") {
    return {
      id, kind: "retry", text: `↺ retry of #${id}`, sub: `attempt ${run.attempt}`,
      title: `retry of run ${id}, attempt ${run.attempt}`, what: "the failed run it retries",
    };
  }
  if (run.trigger === "after") {
    const job = upstreamJob(run, runs, jobs);
    const of = job ? ` of ${job}` : "";
    return {
      id, kind: "after", text: `after #${id}`, sub: job ? `of ${job}` : null,
      title: `after run ${id}${of}, on its success`, what: `the run${of} it follows`,
    };
  }
  return null;
}

/**
 * The run that carries `run` on, or null: `{ id, kind, text, title, what }` as parentLink's.
 * Its kind is its trigger when it is loaded, else what `run` ended as (a cut is resumed, a
 * failure retried).
 */
export function followLink(run, index, runs) {
  const id = followerId(run, index);
  if (id === null) return null;
  const next = runs.get(id);
  const resumed = next ? next.trigger === "resume" : run.status === "interrupted";
  return resumed
    ? { id, kind: "resume", text: `→ resumed as #${id}`, title: `run ${id} resumes it`, what: "its resume" }
    : { id, kind: "retry", text: `→ retried as #${id}`, title: `run ${id} retries it, attempt ${next ? next.attempt : run.attempt + 1}`, what: "its retry" };
}

/** How a run that names `run` as its parent relates to it, in a button's words. */
export function childWhat(child) {
  if (child.trigger === "after") return `of ${child.job}, which runs after it`;
  if (child.trigger === "retry") return "which retries it";
  if (child.trigger === "resume") return "which resumes it";
  return "its child";
}
