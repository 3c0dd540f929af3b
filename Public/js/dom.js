// Tiny DOM helpers. User text only ever goes through textContent.
import { avatarHue as hueOf, initials as initialsOf } from "./format.js";

export const $ = (id) => document.getElementById(id);

export function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

/**
 * `parent` showing a person's name as the clients write it, "Name" or "Name (@username)" (a
 * look-alike name's mark: display names hold no "@", so the last " (@" starts it): the name in
 * `.name-text`, which a narrow line cuts with "…", and the mark in `.name-mark`, which is never cut.
 */
export function showName(parent, text) {
  const at = text.lastIndexOf(" (@");
  if (at < 0) { parent.textContent = text; return parent; }
  parent.replaceChildren(el("span", "name-text", text.slice(0, at)), el("span", "name-mark", text.slice(at)));
  return parent;
}

/** An avatar: the person's `photo` (a path) over their initials (shown if it does not load), with an optional online dot. */
export function avatar(name, id, online, photo) {
  const node = el("span", "avatar");
  node.setAttribute("aria-hidden", "true");
  node.append(document.createTextNode(initialsOf(name)));
  // Dark enough for white initials at any hue (contrast ≥ 4.5:1).
  node.style.background = `hsl(${hueOf(id)} 55% 30%)`;
  if (photo) {
    const img = el("img", "avatar-photo");
    img.alt = "";
    img.decoding = "async";
    img.addEventListener("error", () => img.remove());
    img.src = photo;
    node.append(img);
  }
  if (online) node.append(el("span", "dot"));
  return node;
}

/**
 * Makes `parent`'s children match `items` (each with a unique `key`), reusing existing nodes:
 * `create(item)` makes a node, `update(node, item)` refreshes one, `removed(node)` hears of each node
 * taken out. Only moved or new nodes touch the DOM.
 */
export function reconcile(parent, items, create, update, removed = () => {}) {
  const existing = new Map();
  for (const child of parent.children) existing.set(child.dataset.key, child);
  let cursor = parent.firstElementChild;
  for (const item of items) {
    let node = existing.get(item.key);
    if (node) {
      existing.delete(item.key);
      update(node, item);
    } else {
      node = create(item);
      node.dataset.key = item.key;
    }
    if (node !== cursor) parent.insertBefore(node, cursor);
    else cursor = cursor.nextElementSibling;
  }
  for (const stale of existing.values()) {
    stale.remove();
    removed(stale);
  }
}

/** A short notice at the bottom of the screen ("Invitations sent to …"), read out by screen readers. */
let toastTimer = null;
export function toast(text) {
  const node = $("toast");
  node.textContent = text;
  node.hidden = false;
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => { node.hidden = true; }, 8000);
}

/** An error as a person reads it: a lost network says what to do. */
export function errorText(error) {
  return error?.code === "offline" ? "Cannot reach the server. Check your connection and try again." : (error?.message ?? "Something went wrong.");
}

/**
 * Runs `make`, which builds one account's views, so that every listener they add while being made
 * goes when `signal` aborts (sign-out). The views listen on the page's own elements, which outlive
 * the account: a view left listening once answered the next account's composer into this account's
 * outbox. Listeners added later (on elements a view creates) go with their elements.
 */
export function listeningUntil(signal, make) {
  const add = EventTarget.prototype.addEventListener;
  EventTarget.prototype.addEventListener = function addUntilSignedOut(type, listener, options) {
    const given = typeof options === "object" && options !== null ? options : { capture: Boolean(options) };
    return add.call(this, type, listener, { ...given, signal: given.signal ?? signal });
  };
  try {
    return make();
  } finally {
    EventTarget.prototype.addEventListener = add;
  }
}
