// hosts.js — the hosts panel, and each run's host. On a shared ledger (PostgreSQL) several
// hosts serve; the page shows them, and the host of each run. On SQLite there is one host,
// this one: no hosts section and no host column.

import { $, code, h, muted, reconcile, tag } from "./dom.js";
import { isShared, state } from "./model.js";
import { timeEl } from "./clock.js";

const HOST_STATE = {
  serving: { icon: "●", title: "serving: its server renews its lease" },
  stopped: { icon: "■", title: "stopped: its server released its lease lately" },
  lost: { icon: "⚠", title: "lost: silent for longer than a lease; its runs in flight were cut" },
};

function hostByMachine(id) {
  return state.hosts ? state.hosts.hosts.find((x) => x.machine_id === id) || null : null;
}

/** Where a run is or was: its host's name; "any host" while queued unclaimed; else the bare machine id. */
export function hostView(run) {
  if (!run.machine_id) {
    if (run.status !== "queued") return { text: "—", any: true, title: "no host ran it" };
    const job = state.jobs.find((j) => j.name === run.job);
    const pins = (job && job.hosts) || [];
    return {
      text: pins.length ? `any of ${pins.join(", ")}` : "any host", any: true,
      title: pins.length ? `queued for the first of ${pins.join(", ")} to claim it` : "queued for whichever host claims it first",
    };
  }
  const host = hostByMachine(run.machine_id);
  if (!host) return { text: run.machine_id, unknown: true, title: `machine ${run.machine_id}: not among the hosts` };
  return { text: host.name, state: host.state, title: `${host.name}: machine ${host.machine_id}, ${host.state}` };
}

/** A run's host; `lostTag`: mark a host lost now (the table does so only for runs in flight). */
export function hostEl(run, lostTag = true) {
  const v = hostView(run);
  if (v.any) return muted(v.text, v.title);
  const el = h("span", { class: `host-ref${v.unknown ? " unknown" : ""}`, title: v.title },
    h("span", { class: "host-ref-name", text: v.text }));
  if (v.state === "lost" && lostTag) el.append(" ", tag("⚠ lost", "tag-lost", `the host is ${HOST_STATE.lost.title}`));
  return el;
}

export function renderHosts() {
  const shared = isShared();
  $("#hosts").hidden = !shared;
  $("#runs-host-h").hidden = !shared;
  if (!shared) return;
  const me = state.status ? state.status.server_id : null;
  const hosts = state.hosts.hosts;
  reconcile($("#hosts-list"), hosts, (x) => x.machine_id,
    (x) => JSON.stringify([x, Boolean(me) && x.server_id === me]), (x) => hostCard(x, me));
  renderHostsSummary();
}

export function renderHostsSummary() {
  if (!isShared()) return;
  const hosts = state.hosts.hosts;
  const leader = state.hosts.leader ? hostByMachine(state.hosts.leader) : null;
  const anyQueued = [...state.runs.values()].filter((r) => r.status === "queued" && !r.machine_id).length;
  $("#hosts-summary").replaceChildren(...[
    `${hosts.length} ${hosts.length === 1 ? "host shares" : "hosts share"} `,
    code(state.hosts.ledger), ". ",
    state.hosts.leader
      ? h("span", {}, h("strong", { text: leader ? leader.name : state.hosts.leader }), " leads the scheduler.")
      : h("span", { class: "warn-text", text: "No host leads right now: the next heartbeat elects one." }),
    anyQueued ? ` ${anyQueued} ${anyQueued === 1 ? "run waits" : "runs wait"} for any host.` : null,
  ].filter(Boolean));
}

function hostCard(host, me) {
  const view = HOST_STATE[host.state] || { icon: "?", title: host.state };
  let title = view.title;
  if (host.state === "lost" && !host.server_id) title = "lost: its server stopped (released its lease) more than a lease ago";
  const n = host.in_flight;
  return h("li", { class: "host", "data-host": host.machine_id, "data-state": host.state, "data-leader": String(host.leader) },
    h("div", { class: "host-head" },
      h("span", { class: "host-name", text: host.name }),
      host.leader ? tag("★ leader", "tag-leader", "its server schedules the fires of every job") : null,
      me && host.server_id === me ? tag("this server", "tag-here", "the server this dashboard talks to") : null),
    h("div", { class: "host-facts" },
      h("span", { class: `badge hs-${host.state}`, title },
        h("span", { class: "icon", "aria-hidden": "true", text: view.icon }), h("span", { class: "label", text: host.state })),
      h("span", { class: "host-beat" }, muted("heartbeat "),
        host.last_heartbeat ? timeEl(host.last_heartbeat, { abs: false }) : muted("never")),
      h("span", { class: `host-flight${n ? "" : " muted"}`, title: "its runs queued or running" },
        `${n} ${n === 1 ? "run" : "runs"} in flight`)),
    h("div", { class: "host-id", title: "machine id", text: host.machine_id }),
  );
}
