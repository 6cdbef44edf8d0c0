// labels.js — how a run's status, trigger, signal and parameters read on the page: labels,
// icons, titles, arguments quoted as a shell would need them, and the status badge the jobs,
// runs and details panels share.

import { h } from "./dom.js";

const CUT_TITLE = "interrupted: cut short by something other than the run itself (a restart, a reboot, a stop). Not a failure.";

export const STATUS_VIEW = {
  succeeded: { icon: "✓", label: "succeeded" }, failed: { icon: "✗", label: "failed" },
  running: { icon: "", label: "running" }, queued: { icon: "◌", label: "queued" },
  cancelled: { icon: "⊘", label: "cancelled" }, interrupted: { icon: "✂", label: "cut", title: CUT_TITLE },
  skipped: { icon: "↷", label: "skipped" },
};

export const TRIGGER_LABEL = {
  scheduled: "scheduled", on_demand: "on demand", resume: "resume", catch_up: "catch-up", retry: "retry", after: "after",
};

export const SIGNALS = { 1: "SIGHUP", 2: "SIGINT", 3: "SIGQUIT", 6: "SIGABRT", 9: "SIGKILL", 11: "SIGSEGV", 13: "SIGPIPE", 15: "SIGTERM" };

/** An argument as a shell needs it written: bare when plain, else in single quotes. */
export const quoteArg = (a) => (/^[\w@%+=:,./-]+$/.test(a) ? a : `'${a.replace(/'/g, "'\\''")}'`);

/** A run's own `params` as they read: each variable as `K=V`, and the arguments on one line. */
export function paramsText(params) {
  return {
    env: Object.entries(params.env || {}).map(([k, v]) => `${k}=${quoteArg(v)}`),
    args: (params.args || []).map(quoteArg).join(" "),
  };
}

export function statusBadge(status) {
  const view = STATUS_VIEW[status] || { icon: "?", label: status };
  return h("span", { class: `badge b-${status}`, title: view.title || status },
    status === "running" ? h("span", { class: "dot", "aria-hidden": "true" })
      : h("span", { class: "icon", "aria-hidden": "true", text: view.icon }),
    h("span", { class: "label", text: view.label }));
}
