// status.js — the header: the connection's state, the server's facts (version, pid, epoch,
// start, lease, state directory), and the notice shown in place of the page without access.

import { $ } from "./dom.js";
import { state } from "./model.js";
import { timeEl } from "./clock.js";
import { renderHosts } from "./hosts.js";

const CONN_TEXT = { connecting: "Connecting…", live: "Live", reconnecting: "Reconnecting…", unauthorized: "Unauthorized" };

export function setConn(s) {
  state.conn = s;
  const el = $("#conn");
  el.dataset.state = s;
  el.textContent = CONN_TEXT[s];
}

/** Replaces the page with a notice that it has no (valid) access token. */
export function showAuth(text) {
  $("#auth-text").textContent = text;
  $("#auth").hidden = false;
  $("#main").hidden = true;
}

export function renderStatus() {
  const s = state.status;
  if (!s) return;
  $("#srv-version").textContent = s.version;
  $("#srv-pid").textContent = String(s.pid);
  $("#srv-epoch").textContent = String(s.epoch);
  $("#srv-started").replaceChildren(timeEl(s.started_at));
  $("#srv-lease").replaceChildren(timeEl(s.lease_expires_at, { mode: "lease" }));
  $("#srv-dir").textContent = s.state_dir;
  $("#server").title = `server ${s.server_id}, protocol ${s.protocol}, socket ${s.socket}`;
  renderHosts(); // which host is this server's
}
