// Message search (docs/protocol.md "Search"): a modal dialog opened by Ctrl-K / Cmd-K or the search
// button. Typing searches after a short pause (one request per pause, not per keystroke; an answer to
// an older query is dropped). Results are grouped by conversation; each shows who wrote it, when, and
// its text with the server's match ranges (UTF-16 offsets, which is what JavaScript strings index)
// highlighted as <mark> elements built from text nodes: never markup from the text. The search field
// keeps the focus and controls a listbox: arrows move through the results (aria-activedescendant, as
// in a combobox; the role itself is left out for the axe version the tests run), Enter or a click
// opens one, Escape closes and focus goes back to where it was.
import { closeDialog, openDialog, restoreFocusOnClose } from "./dialog.js";
import { $, el, errorText } from "./dom.js";
import { clockTime, shownText, smartTime } from "./format.js";

const DEBOUNCE_MS = 250;
const PAGE = 20;
const SNIPPET = 200;   // characters of a long message shown around its first match
const LEAD = 50;       // of them before the match

let current = null;  // the signed-in page's search (the DOM listeners below are installed once)

export class SearchDialog {
  constructor(store, { onChoose }) {
    this.store = store;
    this.onChoose = onChoose;
    this.dialog = $("message-search-dialog");
    this.reset();
    current = this;
    install();
  }

  reset() {
    clearTimeout(this.timer);
    this.request = (this.request ?? 0) + 1;  // an answer still on its way is for nobody now
    this.query = "";
    this.results = [];
    this.nextCursor = null;
    this.loading = false;
    this.loadingMore = false;
    this.error = null;
    this.active = null;  // the key of the highlighted result ("conversationId:seq")
  }

  open() {
    const input = $("message-search-input");
    if (this.dialog.open) { input.focus(); input.select(); return; }
    if (document.querySelector("dialog[open]")) return;  // another dialog is in the way
    openDialog(this.dialog, input);
    input.select();
    this.render();
  }

  close() { closeDialog(this.dialog); }

  get order() { return $("message-search-order").value; }

  onInput() {
    clearTimeout(this.timer);
    const query = $("message-search-input").value.trim();
    if (!query) {
      this.reset();
      this.render();
      return;
    }
    this.timer = setTimeout(() => this.search(query), DEBOUNCE_MS);
  }

  /** Searches now (a new query or order): the first page. */
  async search(query = $("message-search-input").value.trim()) {
    clearTimeout(this.timer);
    if (!query) { this.reset(); this.render(); return; }
    const request = ++this.request;
    this.query = query;
    this.loading = true;
    this.error = null;
    this.render();
    try {
      const page = await this.store.api.searchMessages(query, { order: this.order, limit: PAGE });
      if (request !== this.request) return;
      this.results = validResults(page?.results);
      this.nextCursor = page?.nextCursor ?? null;
      this.active = null;
    } catch (error) {
      if (request !== this.request) return;
      this.results = [];
      this.nextCursor = null;
      this.error = searchError(error);
    }
    this.loading = false;
    this.render();
  }

  async more() {
    if (!this.nextCursor || this.loadingMore) return;
    const request = this.request;
    this.loadingMore = true;
    this.render();
    try {
      const page = await this.store.api.searchMessages(this.query, { order: this.order, cursor: this.nextCursor, limit: PAGE });
      if (request !== this.request) return;
      const known = new Set(this.results.map(keyOf));
      this.results.push(...validResults(page?.results).filter((result) => !known.has(keyOf(result))));
      this.nextCursor = page?.nextCursor ?? null;
    } catch (error) {
      if (request !== this.request) return;
      this.error = searchError(error);
    } finally {
      if (request === this.request) this.loadingMore = false;
    }
    this.render();
    if (!this.nextCursor && this.dialog.contains(document.activeElement) === false) $("message-search-input").focus();
  }

  /** Results grouped by conversation, in the order each conversation first appears. */
  groups() {
    const groups = new Map();
    for (const result of this.results) {
      if (!groups.has(result.conversationId)) groups.set(result.conversationId, []);
      groups.get(result.conversationId).push(result);
    }
    return [...groups];
  }

  titleOf(conversationId) {
    const summary = this.store.conversations.get(conversationId);
    if (summary) return this.store.titleOf(summary);
    this.fetchSummary(conversationId);
    return this.store.isGroup(conversationId) ? "Group" : "Conversation";
  }

  /** A conversation this page does not list yet (beyond the first page of the list): read once. */
  fetchSummary(id) {
    this.fetched ??= new Set();
    if (this.fetched.has(id)) return;
    this.fetched.add(id);
    this.store.api.conversation(id).then((summary) => { this.store.addSummary(summary); this.store.changed(); this.render(); }).catch(() => {});
  }

  senderName(result) {
    if (result.senderId === this.store.me) return "You";
    const summary = this.store.conversations.get(result.conversationId);
    if (summary && !this.store.isGroup(summary)) {
      const other = this.store.other(summary);
      if (other?.userId === result.senderId && other.displayName) return this.store.directName(other);
    }
    const name = this.store.nameOf(result.senderId, summary);
    if (!name) this.unresolved = true;  // fetched: the list is drawn again when it is known
    return name ?? "…";
  }

  /**
   * A message changed while results are on screen. Deleted for everyone (or hidden, `gone`): its
   * result leaves at once. Its text edited: the search is asked again, since the words it was found
   * by may be gone and the highlights are the server's; a reaction changes nothing here.
   */
  updated(message, gone = Boolean(message?.deletedAt)) {
    if (!this.query || !message) return;
    const key = keyOf(message);
    const shown = this.results.find((result) => keyOf(result) === key);
    if (!shown) return;
    if (gone) {
      this.results = this.results.filter((result) => result !== shown);
      if (this.active === key) this.active = null;
      this.render();
    } else if (typeof message.text === "string" && message.text !== shown.text) {
      this.search(this.query);
    }
  }

  /** The store changed (a name or a conversation became known): drawn again while open. */
  refresh() {
    if (this.dialog.open && this.unresolved) this.render();
  }

  render() {
    if (!this.dialog.open) return;
    this.unresolved = false;
    const list = $("message-search-results");
    const input = $("message-search-input");
    const status = $("message-search-status");
    const options = [];
    const groups = this.groups().map(([conversationId, results]) => {
      const group = el("div", "search-group");
      group.setAttribute("role", "group");
      const title = this.titleOf(conversationId);
      group.setAttribute("aria-label", title);
      const heading = el("div", "search-group-title", title);
      heading.setAttribute("aria-hidden", "true");  // the group's label says it
      group.append(heading);
      for (const result of results) {
        const option = this.option(result);
        options.push(option);
        group.append(option);
      }
      return group;
    });
    list.replaceChildren(...groups);
    list.hidden = options.length === 0;
    list.dataset.query = this.loading ? "" : this.query;  // what the shown results answer
    if (!options.some((option) => option.dataset.key === this.active)) this.active = null;
    this.setActive(this.active, false);
    const more = $("message-search-more");
    more.hidden = !this.nextCursor || Boolean(this.error);
    more.disabled = this.loadingMore;
    more.textContent = this.loadingMore ? "Loading more…" : "More results";
    status.classList.toggle("error", Boolean(this.error));
    const text = this.statusText();
    if (status.textContent !== text) status.textContent = text;
  }

  statusText() {
    if (this.error) return this.error;
    if (this.loading) return "Searching…";
    if (!this.query) return "";
    const count = this.results.length;
    if (count === 0) return `No messages found for “${this.query}”`;
    const noun = count === 1 ? "result" : "results";
    return this.nextCursor ? `${count} ${noun} shown, more available` : `${count} ${noun}`;
  }

  option(result) {
    const key = keyOf(result);
    const option = el("div", "search-result");
    option.id = `search-result-${key.replace(/[^A-Za-z0-9_-]/g, "-")}`;
    option.dataset.key = key;
    option.setAttribute("role", "option");
    option.setAttribute("aria-selected", "false");
    const top = el("div", "search-result-top");
    const time = el("time", "search-result-time", timeOf(result.createdAt));
    time.dateTime = new Date(result.createdAt).toISOString();
    top.append(el("span", "search-result-sender", this.senderName(result)), time);
    option.append(top, highlighted(result.text, result.matches));
    option.addEventListener("click", () => this.choose(result));
    // The pointer does not take focus from the input (the combobox keeps it).
    option.addEventListener("mousedown", (event) => event.preventDefault());
    return option;
  }

  /** Highlights the result with `key` (null: none); `scroll` brings it into view. */
  setActive(key, scroll = true) {
    this.active = key;
    let activeNode = null;
    for (const option of $("message-search-results").querySelectorAll("[role=option]")) {
      const on = option.dataset.key === key;
      option.setAttribute("aria-selected", String(on));
      option.classList.toggle("active", on);
      if (on) activeNode = option;
    }
    const input = $("message-search-input");
    if (activeNode) input.setAttribute("aria-activedescendant", activeNode.id);
    else input.removeAttribute("aria-activedescendant");
    if (activeNode && scroll) activeNode.scrollIntoView({ block: "nearest" });
  }

  onKey(event) {
    const options = [...$("message-search-results").querySelectorAll("[role=option]")];
    const index = options.findIndex((option) => option.dataset.key === this.active);
    if (event.key === "ArrowDown" || event.key === "ArrowUp") {
      if (!options.length) return;
      event.preventDefault();
      const down = event.key === "ArrowDown";
      const next = index < 0 ? (down ? 0 : options.length - 1) : Math.min(options.length - 1, Math.max(0, index + (down ? 1 : -1)));
      this.setActive(options[next].dataset.key);
    } else if ((event.key === "Home" || event.key === "End") && event.ctrlKey && options.length) {
      event.preventDefault();
      this.setActive(options[event.key === "Home" ? 0 : options.length - 1].dataset.key);
    } else if (event.key === "Enter" && !event.isComposing) {
      event.preventDefault();
      const result = this.results.find((candidate) => keyOf(candidate) === this.active);
      if (result) this.choose(result);
      else this.search();  // no pause needed: search now
    } else if (event.key === "Escape") {
      event.preventDefault();  // one Escape closes (the search field would first clear itself)
      this.close();
    }
  }

  choose(result) {
    this.close();
    this.onChoose(result.conversationId, result.seq);
  }
}

/** Draws `text` with the `matches` ranges in <mark> elements: a span of text nodes and marks. */
export function highlighted(raw, matches) {
  const text = shownText(raw);  // the same length: the server's ranges still fit
  const span = el("span", "search-result-text");
  span.dir = "auto";
  const ranges = (Array.isArray(matches) ? matches : [])
    .filter((m) => Number.isInteger(m?.start) && Number.isInteger(m?.length) && m.start >= 0 && m.length > 0 && m.start < text.length)
    .sort((a, b) => a.start - b.start);
  // A long message: the part around its first match.
  let from = 0, to = text.length;
  if (text.length > SNIPPET) {
    from = graphemeStart(text, Math.max(0, Math.min((ranges[0]?.start ?? 0) - LEAD, text.length - SNIPPET)));
    to = Math.min(text.length, from + SNIPPET);
    if (to < text.length) { const start = graphemeStart(text, to); if (start > from) to = start; }
  }
  if (from > 0) span.append(document.createTextNode("…"));
  let position = from;
  for (const { start, length } of ranges) {
    const begin = Math.max(start, position), end = Math.min(start + length, to);
    if (end <= begin) continue;
    if (begin > position) span.append(document.createTextNode(text.slice(position, begin)));
    span.append(el("mark", null, text.slice(begin, end)));
    position = end;
  }
  if (position < to) span.append(document.createTextNode(text.slice(position, to)));
  if (to < text.length) span.append(document.createTextNode("…"));
  return span;
}

const GRAPHEMES = typeof Intl?.Segmenter === "function" ? new Intl.Segmenter(undefined, { granularity: "grapheme" }) : null;

/** Where the character `index` falls in begins: a cut there keeps a flag, a skin tone or a family emoji whole. */
function graphemeStart(text, index) {
  if (index <= 0 || index >= text.length) return index;
  if (GRAPHEMES) return GRAPHEMES.segment(text).containing(index)?.index ?? index;
  const code = text.charCodeAt(index);
  return code >= 0xdc00 && code <= 0xdfff ? index - 1 : index;
}

function keyOf(result) { return `${result.conversationId}:${result.seq}`; }

function timeOf(ms) {
  const day = smartTime(ms);
  const clock = clockTime(ms);
  return day === clock ? clock : `${day}, ${clock}`;
}

/** Results the page can show (a malformed entry from a newer or broken server is left out). */
function validResults(results) {
  return (Array.isArray(results) ? results : []).filter((r) => r && typeof r.conversationId === "string"
    && Number.isInteger(r.seq) && typeof r.text === "string");
}

function searchError(error) {
  if (error?.code === "rate_limited") return "Too many searches at once. Wait a moment and try again.";
  if (error?.code === "invalid_query") return error.message || "That search cannot be run.";
  return errorText(error);
}

/** DOM listeners, once per page (a sign-out and sign-in makes a new SearchDialog, not new listeners). */
let installed = false;
function install() {
  if (installed) return;
  installed = true;
  restoreFocusOnClose($("message-search-dialog"));
  $("search-messages").addEventListener("click", () => current?.open());
  $("message-search-close").addEventListener("click", () => current?.close());
  $("message-search-input").addEventListener("input", () => current?.onInput());
  $("message-search-input").addEventListener("keydown", (event) => current?.onKey(event));
  $("message-search-order").addEventListener("change", () => { current?.search(); });
  $("message-search-more").addEventListener("click", () => current?.more());
  document.addEventListener("keydown", (event) => {
    if (!(event.ctrlKey || event.metaKey) || event.altKey || event.shiftKey || event.key?.toLowerCase() !== "k") return;
    if (!current || $("app-view").hidden) return;
    event.preventDefault();
    current.open();
  });
}

/** The signed-in page's search was closed for good (sign-out). */
export function stopSearch() {
  current?.close();
  current = null;
}
