// services.js — the services and holds panels: one card per service (how it restarts, is
// checked and known, its dependents, and what a restart now would cut), and every hold.

import { $, code, h, muted, reconcile, tag } from "./dom.js";
import { state } from "./model.js";
import { timeEl, timesIn } from "./clock.js";

export function renderServices() {
  reconcile($("#services-list"), state.services, (svc) => svc.name,
    (svc) => JSON.stringify([svc, (state.readiness.get(svc.name) || {}).data || null]), serviceCard);
  $("#services-empty").hidden = state.services.length > 0;
}

function serviceCard(svc) {
  const r = (state.readiness.get(svc.name) || {}).data;
  const facts = [
    ["restart", svc.restart], ["ready", svc.ready], ["systemd unit", svc.systemd_unit],
    ["launchd label", svc.launchd_label], ["process", svc.process],
  ].filter(([, v]) => v);
  const dependents = svc.dependents || [];
  return h("article", { class: "service", "data-service": svc.name, "data-restarting": String(svc.restarting) },
    h("header", { class: "service-head" },
      h("h3", { text: svc.name }),
      svc.builtin ? tag("built in", "tag-plain") : null,
      svc.restarting ? h("span", { class: "pill pill-warn", text: "⟳ restarting" }) : h("span", { class: "pill pill-off", text: "not restarting" })),
    facts.length ? h("dl", { class: "facts" }, facts.map(([k, v]) => h("div", {}, h("dt", { text: k }), h("dd", {}, code(v))))) : null,
    h("p", { class: "dependents" }, h("span", { class: "muted", text: "Dependents: " }),
      dependents.length ? dependents.join(", ") : muted(svc.builtin ? "no job names it (all jobs count)" : "none")),
    r ? readinessEl(r) : muted("Readiness not loaded yet."),
  );
}

function readinessEl(r) {
  const box = h("div", { class: `readiness ${r.ready ? "ready" : "blocked"}`, "data-ready": String(r.ready) });
  if (r.blockers.length) {
    box.append(h("p", { class: "cut-head", text: `A restart now would cut (window ${r.window}):` }),
      h("ul", { class: "blockers" }, r.blockers.map(blockerEl)));
  } else {
    box.append(h("p", { class: "safe", text: "✓ A restart now would cut: nothing — safe to restart." }));
  }
  if (r.wedged_holds.length) {
    box.append(h("p", { class: "muted", text: "Wedged holds (past their TTL, blocking nothing):" }),
      h("ul", { class: "wedged" }, r.wedged_holds.map((hd) =>
        h("li", {}, h("span", { class: "mono", text: hd.name }), " expired ", timeEl(hd.expires_at, { abs: false })))));
  }
  if (r.notes.length) box.append(h("ul", { class: "notes" }, r.notes.map((n) => h("li", {}, timesIn(n)))));
  return box;
}

function blockerEl(b) {
  if (b.kind === "run") {
    return h("li", {}, "run ",
      h("button", { type: "button", class: "link", "data-action": "goto", "data-target": b.id, text: `#${b.id}` }),
      ` of ${b.job}`, b.started_at ? h("span", { class: "muted" }, ", started ", timeEl(b.started_at, { abs: false })) : null);
  }
  if (b.kind === "fire") return h("li", {}, `${b.job} fires at `, timeEl(b.at));
  if (b.kind === "hold") return h("li", {}, "hold ", h("span", { class: "mono", text: b.name }), ", expires ", timeEl(b.expires_at));
  return h("li", { text: JSON.stringify(b) });
}

export function renderHolds() {
  reconcile($("#holds-table tbody"), state.holds, (hd) => hd.name, (hd) => JSON.stringify(hd), holdRow);
  $("#holds-empty").hidden = state.holds.length > 0;
}

function holdRow(hd) {
  return h("tr", { "data-hold": hd.name, "data-wedged": String(hd.wedged) },
    h("th", { scope: "row", class: "mono", text: hd.name }),
    h("td", { text: hd.service }),
    h("td", {}, timeEl(hd.acquired_at)),
    h("td", {}, timeEl(hd.expires_at)),
    h("td", {}, hd.wedged
      ? h("span", { class: "pill pill-warn", title: "past its TTL: listed, blocking nothing", text: "wedged" })
      : h("span", { class: "pill pill-live", title: "a restart of its service waits for it", text: "● live" })),
  );
}
