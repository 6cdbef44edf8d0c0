// dom.js — building elements and keeping lists of them current: $, h (createElement with
// attributes and children), the small tag/muted/code pieces, and reconcile (keyed rows).
// Every piece of data reaches the page as text (textContent, text nodes), never as HTML.
// Touches `document` only when called.

export const $ = (sel) => document.querySelector(sel);

/** createElement with attributes ("text" sets textContent, "class" the class) and children. */
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k === "text") el.textContent = String(v);
    else if (k === "class") el.className = v;
    else el.setAttribute(k, v === true ? "" : String(v));
  }
  for (const c of children.flat()) {
    if (c === null || c === undefined || c === false) continue;
    el.append(c instanceof Node ? c : String(c));
  }
  return el;
}

export const tag = (text, cls, title) => h("span", { class: `tag ${cls || ""}`.trim(), text, title });
export const muted = (text, title) => h("span", { class: "muted", text, title });
export const code = (text) => h("code", { text });

/**
 * Keeps `parent`'s children in the order of `items`, one per key, rebuilding a child only
 * when its signature changed, so unchanged rows survive; a rebuilt row keeps the keyboard
 * focus on its button with the same data-action.
 */
export function reconcile(parent, items, keyOf, sigOf, build) {
  const old = new Map();
  for (const el of parent.children) old.set(el._key, el);
  let i = 0;
  for (const item of items) {
    const key = keyOf(item);
    const sig = sigOf(item);
    let el = old.get(key);
    old.delete(key);
    if (!el || el._sig !== sig) {
      const fresh = build(item);
      fresh._key = key;
      fresh._sig = sig;
      const focused = el && el.contains(document.activeElement) ? document.activeElement.dataset.action : null;
      if (el) el.replaceWith(fresh);
      const again = focused && fresh.querySelector(`[data-action="${focused}"]`);
      if (again) again.focus();
      el = fresh;
    }
    if (parent.children[i] !== el) parent.insertBefore(el, parent.children[i] || null);
    i += 1;
  }
  for (const el of old.values()) el.remove();
}
