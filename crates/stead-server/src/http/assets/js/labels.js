// labels.js — how a run's status, trigger and signal read on the page: labels, icons,
// titles, and the status badge the jobs, runs and details panels share.

import { h } from "./dom.js";

const CUT_TITLE = "interrupted: cut short by something other than the run itself (a restart, a reboot, a stop). Not a failure.";

export const STATUS_VIEW = {
  succeeded: { icon: "✓", label: "succeeded" }, failed: { icon: "✗", label: "failed" },
  running: { icon: "", label: "running" }, queued: { icon: "◌", label: "queued" },
  cancelled: { icon: "⊘", label: "cancelled" }, interrupted: { icon: "✂", label: "cut", title: CUT_TITLE },
  skipped: { icon: "↷", label: "skipped" },
};

export const TRIGGER_LABEL = { scheduled: "scheduled", on_demand: "on demand", resume: "resume", catch_up: "catch-up" };

export const SIGNALS = { 1: "SIGHUP", 2: "SIGINT", 3: "SIGQUIT", 6: "SIGABRT", 9: "SIGKILL", 11: "SIGSEGV", 13: "SIGPIPE", 15: "SIGTERM" };

export function statusBadge(status) {
  const view = STATUS_VIEW[status] || { icon: "?", label: status };
  return h("span", { class: `badge b-${status}`, title: view.title || status },
    status === "running" ? h("span", { class: "dot", "aria-hidden": "true" })
      : h("span", { class: "icon", "aria-hidden": "true", text: view.icon }),
    h("span", { class: "label", text: view.label }));
}
