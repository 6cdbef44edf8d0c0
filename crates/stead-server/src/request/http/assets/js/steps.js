// steps.js — the selected run's steps as segments of the run: what its idempotency key holds
// (`GET /api/runs/{id}/checkpoints`), each completed step a segment in the order they
// completed, as wide as the time it took in this run, or narrow and muted when an earlier
// attempt completed it (this run skipped it); the checkpoint keys below.

import { api, enc } from "./api.js";
import { $, h, muted } from "./dom.js";
import { state } from "./model.js";

/** What was last fetched: the run and its status then (a run that moves on is asked again). */
let shown = { sig: null, data: null };

/** Renders the selected run's steps, fetching them when the run or its status changed. */
export async function renderSteps(run) {
  const box = $("#run-steps");
  const sig = `${run.id}:${run.status}:${run.ended_at}`;
  if (shown.sig !== sig) {
    shown = { sig, data: null };
    try {
      shown.data = await api(`/api/runs/${enc(run.id)}/checkpoints`);
    } catch (_) {
      shown.data = null; // an earlier server, or a pruned run: nothing to show
    }
    // Another run may have been selected meanwhile: draw only the one still selected.
    if (state.selectedId !== run.id) return;
  }
  const data = shown.data;
  const empty = !data || (data.steps.length === 0 && data.checkpoints.length === 0);
  box.hidden = empty;
  if (empty) return box.replaceChildren();
  box.replaceChildren(
    h("h3", { class: "fields-h", text: "Steps" }),
    data.steps.length ? bar(run, data.steps) : muted("No step completed yet."),
    data.checkpoints.length
      ? h("p", { class: "checkpoint-keys" }, muted("Checkpoints: "), ...data.checkpoints.map((c) => h("code", { text: c.key, title: `set by run #${c.run_id} at ${c.set_at}` })))
      : null,
  );
}

/** One segment per step: this run's sized by how long each took after the one before. */
function bar(run, steps) {
  let since = run.started_at ? Date.parse(run.started_at) : null;
  const segments = steps.map((s) => {
    const at = Date.parse(s.completed_at);
    const mine = s.run_id === run.id;
    const took = mine && since !== null ? Math.max(at - since, 1) : 0;
    if (mine) since = at;
    const who = mine ? "this run" : `run #${s.run_id} (attempt ${s.attempt})`;
    return h("li", {
      class: `step ${mine ? "step-mine" : "step-earlier"}`,
      "data-grow": mine ? String(took) : "0",
      title: `${s.name}: completed by ${who} at ${s.completed_at}${mine ? "" : "; skipped by this run"}`,
    }, h("span", { class: "step-name", text: s.name }), h("span", { class: "step-who", text: mine ? `attempt ${s.attempt}` : `done by #${s.run_id}` }));
  });
  if (run.status === "running" || run.status === "queued") {
    segments.push(h("li", { class: "step step-now", "data-grow": "0", title: "in progress" }, h("span", { class: "step-name", text: "…" })));
  }
  const list = h("ol", { class: "steps-bar", "aria-label": "Completed steps, in order" }, segments);
  // Widths as flex-grow, set through the CSSOM (the page's policy allows no inline style text).
  for (const li of list.children) li.style.flexGrow = String(Math.max(Number(li.dataset.grow), 0) + 1);
  return list;
}
