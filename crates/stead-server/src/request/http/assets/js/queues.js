// queues.js — the queues and notifiers panels: each queue's limit, its runs going and
// waiting and the jobs that share it; each notifier's receiver, the events it gets, and how
// its deliveries stand (delivered, pending, the last error).

import { $, h, muted, reconcile, tag } from "./dom.js";
import { state } from "./model.js";
import { timeEl } from "./clock.js";

export function renderQueues() {
  reconcile($("#queues-table tbody"), state.queues, (q) => q.name, (q) => JSON.stringify(q), queueRow);
  $("#queues-empty").hidden = state.queues.length > 0;
}

function queueRow(q) {
  const full = q.running >= q.parallel;
  return h("tr", { "data-queue": q.name, "data-full": String(full) },
    h("th", { scope: "row", class: "mono", text: q.name }),
    h("td", { class: "num", title: `at most ${q.parallel} at once on a host` },
      h("span", { class: full ? "strong" : null, text: String(q.running) }), muted(` of ${q.parallel}`)),
    h("td", { class: "num" }, q.waiting
      ? h("span", { class: "warn-text", text: String(q.waiting), title: "runs waiting for a place" })
      : muted("0")),
    h("td", {}, q.jobs.length ? h("span", { class: "tags" }, q.jobs.map((j) => tag(j, "tag-plain"))) : muted("no job names it")),
  );
}

export function renderNotifiers() {
  reconcile($("#notifiers-table tbody"), state.notifiers, (n) => n.name, (n) => JSON.stringify(n), notifierRow);
  $("#notifiers-empty").hidden = state.notifiers.length > 0;
}

function notifierRow(n) {
  const jobs = n.jobs || [];
  return h("tr", { "data-notifier": n.name, "data-pending": String(n.pending) },
    h("th", { scope: "row" }, h("span", { class: "mono", text: n.name }),
      n.sign ? h("div", {}, tag("signed", "tag-plain", `HMAC-SHA256, secret in ${n.secret_file}`)) : null),
    h("td", { class: "receiver" }, h("code", { class: "url", text: n.url, title: n.url }),
      h("div", { class: "sub" }, jobs.length ? `only ${jobs.join(", ")}` : "every job")),
    h("td", {}, h("span", { class: "tags" }, n.delivers.map((e) => tag(e, "tag-plain")))),
    h("td", { class: "deliveries" }, deliveriesEl(n)),
  );
}

/** Delivered (and when last), pending, and why the latest attempt failed while one is. */
function deliveriesEl(n) {
  return [
    h("div", {}, `${n.delivered} delivered`,
      n.last_delivered_at ? h("span", { class: "muted" }, ", last ", timeEl(n.last_delivered_at, { abs: false })) : null),
    n.pending ? h("div", { class: "warn-text", text: `${n.pending} pending`, title: "written, not yet delivered: retried with backoff" }) : null,
    n.last_error ? h("div", { class: "error", text: n.last_error, title: n.last_error }) : null,
  ];
}
