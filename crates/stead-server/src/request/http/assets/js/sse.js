// sse.js — the server's event stream: a server-sent-events parser (pure: node can import
// it) and the loop that reads /api/events with fetch (so it can carry the Bearer header),
// reconnecting with backoff.

import { request } from "./api.js";

/** A server-sent-events parser: feed it decoded text, it calls onEvent(type, data). */
export function sseParser(onEvent) {
  let buf = "";
  let type = "";
  let data = [];
  const line = (l) => {
    if (l === "") {
      if (data.length) onEvent(type || "message", data.join("\n"));
      type = "";
      data = [];
      return;
    }
    if (l[0] === ":") return; // keep-alive comment
    const i = l.indexOf(":");
    const field = i < 0 ? l : l.slice(0, i);
    let value = i < 0 ? "" : l.slice(i + 1);
    if (value[0] === " ") value = value.slice(1);
    if (field === "event") type = value;
    else if (field === "data") data.push(value);
  };
  return (chunk) => {
    buf += chunk;
    for (;;) {
      const m = /\r\n|\n|\r(?!$)/.exec(buf); // a trailing \r may be half of \r\n
      if (!m) break;
      line(buf.slice(0, m.index));
      buf = buf.slice(m.index + m[0].length);
    }
  };
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

let streamCtrl = null; // aborts the stream being read

/** Drops the stream being read (the loop then asks `on.stopped()` whether to reconnect). */
export function abortEvents() {
  if (streamCtrl) streamCtrl.abort();
}

/**
 * Reads /api/events forever, reconnecting with backoff (1 s, doubling up to 10 s).
 * `on.conn(state)`: "connecting", "live" or "reconnecting"; `on.load()`: refetch everything,
 * on each connect (and once when the first try fails); `on.event(type, data)`: each event;
 * `on.stopped()`: true when the loop must end instead of reconnecting.
 */
export async function eventLoop(on) {
  let delay = 1000;
  for (let attempt = 0; ; attempt += 1) {
    on.conn(attempt === 0 ? "connecting" : "reconnecting");
    const ctrl = new AbortController();
    streamCtrl = ctrl;
    let connected = false;
    try {
      const res = await request("/api/events", { headers: { Accept: "text/event-stream" }, signal: ctrl.signal });
      connected = true;
      delay = 1000;
      on.conn("live");
      on.load();
      const reader = res.body.getReader();
      const decoder = new TextDecoder();
      const feed = sseParser(on.event);
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        feed(decoder.decode(value, { stream: true }));
      }
    } catch (_) {
      // dropped or refused: fall through to the backoff
    }
    if (on.stopped()) return;
    if (!connected && attempt === 0) on.load(); // show what can be shown without the stream
    on.conn("reconnecting");
    await sleep(delay);
    delay = Math.min(delay * 2, 10000);
  }
}
