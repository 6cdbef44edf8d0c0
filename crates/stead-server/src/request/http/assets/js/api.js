// api.js — talking to the HTTP API: the access token (from the URL's fragment, kept in
// sessionStorage), fetch with the Bearer header, API errors, and the banner that shows them.

import { $, h } from "./dom.js";

const TOKEN_KEY = "stead-token";

let token = null;
let onUnauthorized = () => {};

class ApiError extends Error {
  constructor(status, code, message) { super(message); Object.assign(this, { status, code }); }
}

export const enc = encodeURIComponent;

/** The token the requests carry. */
export const currentToken = () => token;
export function setToken(t) { token = t; }

/** What to do when the server refuses the token (a 401 answer). */
export function whenUnauthorized(fn) { onUnauthorized = fn; }

/** The token from the URL's fragment (which then leaves the address bar) or, failing that, the tab's storage. */
export function readToken() {
  const fromHash = new URLSearchParams(location.hash.slice(1)).get("token");
  if (fromHash) history.replaceState(null, "", location.pathname + location.search);
  try {
    if (fromHash) sessionStorage.setItem(TOKEN_KEY, fromHash);
    return fromHash || sessionStorage.getItem(TOKEN_KEY);
  } catch (_) {
    return fromHash; // no storage: the token lives as long as the page
  }
}

/** Removes the token from the tab's storage (the server refused it). */
export function forgetToken() {
  try { sessionStorage.removeItem(TOKEN_KEY); } catch (_) { /* no storage: nothing to forget */ }
}

/** fetch with the Bearer header; a non-2xx answer throws ApiError with the server's {code, message}. */
export async function request(path, opts = {}) {
  const headers = { Authorization: `Bearer ${token}`, ...(opts.headers || {}) };
  const res = await fetch(path, { ...opts, headers, cache: "no-store" });
  if (res.ok) return res;
  let code = `http_${res.status}`;
  let message = res.statusText || `HTTP ${res.status}`;
  const body = await res.json().catch(() => null); // not JSON: keep the status line
  if (body && body.code) [code, message] = [body.code, body.message || message];
  if (res.status === 401) onUnauthorized();
  throw new ApiError(res.status, code, message);
}

/** A JSON request: the parsed answer, or null for an empty one. */
export async function api(path, opts = {}) {
  const res = await request(path, { ...opts, headers: { Accept: "application/json", ...(opts.headers || {}) } });
  const text = await res.text();
  return text ? JSON.parse(text) : null;
}

/** Shows an error in the banner (the five newest). */
export function showError(what, err) {
  if (err && err.status === 401) return; // the unauthorized message says it
  const detail = err instanceof ApiError ? `${err.message} (${err.code})` : String((err && err.message) || err);
  const list = $("#banner-list");
  list.prepend(h("li", {}, h("strong", { text: `${what}: ` }), detail));
  while (list.children.length > 5) list.lastElementChild.remove();
  $("#banner").hidden = false;
}

export function dismissErrors() {
  $("#banner-list").replaceChildren();
  $("#banner").hidden = true;
}
