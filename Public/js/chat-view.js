// One open chat: header, message list (keyed rendering, date separators, statuses), scrolling,
// read marking and the composer. In a group: sender names, membership entries as lines of their
// own, mentions, "Message info", and a notice instead of the composer once I am out.
import { renderComposer, renderHeader } from "./chat-header.js";
import { $, el, reconcile } from "./dom.js";
import { entryLines } from "./entries.js";
import { COUNTER_THRESHOLD, MAX_CHARACTERS, canSend, characterCount, clockTime, dayKey, dayLabel, isEmojiOnly, normalizedText,
  senderColour } from "./format.js";
import { MentionPicker, appendWithMentions } from "./mentions.js";

// Sending is a small clock drawn in CSS (monochrome, not an emoji); failed is a red "!".
const STATUS_MARKS = { sending: "", sent: "✓", delivered: "✓✓", read: "✓✓", failed: "!" };
const STATUS_LABELS = { sending: "Sending", sent: "Sent", delivered: "Delivered", read: "Read", failed: "Not sent" };

// Windowing: only a slice of a long history is in the DOM (about six elements a row, so the page
// stays well under 1,500 elements however long the chat). The window follows the newest message
// unless the reader has scrolled back; it slides by STEP rows when the reader nears one of its
// edges, keeping the row under the reader's eyes where it was (the scroll anchor).
const WINDOW = 150;
const STEP = 50;
const EDGE_PX = 600;
export class ChatView {
  constructor(store, { onGroupInfo = () => {}, onMessageInfo = () => {} } = {}) {
    this.store = store;
    this.onGroupInfo = onGroupInfo;
    this.onMessageInfo = onMessageInfo;
    this.id = null;
    this.other = null;
    this.visibleSeqs = new Set();
    this.lastTypingSent = 0;
    this.observer = new IntersectionObserver((entries) => this.onVisibility(entries), { root: $("messages") });
    const messages = $("messages");
    messages.addEventListener("scroll", () => this.onScroll());
    // Rows off screen have an estimated height (content-visibility); when they get their real one the
    // list grows, and a reader at the bottom must stay at the bottom.
    new ResizeObserver(() => { if (this.stickToBottom && this.id) messages.scrollTop = messages.scrollHeight; })
      .observe($("message-list"));
    $("new-messages-pill").addEventListener("click", () => this.scrollToBottom(true));
    const input = $("composer-input");
    this.mentions = new MentionPicker($("composer-box"), input, $("mention-list"), () => this.mentionCandidates());
    input.addEventListener("input", () => this.onInput());
    input.addEventListener("keydown", (event) => {
      if (this.mentions.handleKey(event)) return;  // the member listbox is open: its keys
      if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
        event.preventDefault();
        this.submit();
      }
    });
    input.addEventListener("blur", () => this.stopTyping());
    $("composer").addEventListener("submit", (event) => { event.preventDefault(); this.submit(); });
    // The group header opens the member panel: its name is a button, and the status line clicks too.
    $("chat-title").addEventListener("click", (event) => {
      if (this.isGroup && !event.target.closest("button")) this.onGroupInfo(this.id);
    });
    $("message-list").addEventListener("click", (event) => {
      const button = event.target.closest(".info-button");
      const seq = Number(button?.closest("li")?.dataset.seq);
      const message = seq && this.store.thread(this.id).messages.get(seq);
      if (message) this.onMessageInfo(this.id, message);
    });
    for (const type of ["focus", "visibilitychange"]) {
      (type === "focus" ? window : document).addEventListener(type, () => this.markVisibleRead());
    }
  }

  /** Opens the chat with `other` ({ userId, displayName }) in conversation `id` (which may not exist yet). */
  async open(id, other) {
    if (this.id !== id) {
      this.stopTyping();
      this.id = id;
      this.other = other;
      this.visibleSeqs.clear();
      this.observer.disconnect();
      this.stickToBottom = true;
      this.windowEndKey = null;
      this.window = null;
      this.lastKey = undefined;
      $("message-list").replaceChildren();
      $("composer-input").value = "";
      this.mentions.enable(this.store.isGroup(id));
      this.onInput();
    }
    $("chat").hidden = false;
    $("chat-placeholder").hidden = true;
    const thread = this.store.thread(id);
    this.render();
    // A chat that does not exist yet answers 404 and starts empty ("Say hello!").
    if (!thread.loaded) await this.store.loadThread(id);
    this.render();
    this.scrollToBottom(true);
    if (!$("composer").hidden) $("composer-input").focus();
    else $("messages").focus();
  }

  get isGroup() { return Boolean(this.id) && this.store.isGroup(this.store.conversations.get(this.id) ?? this.id); }

  /** Members I can mention: everyone in the group now but me. */
  mentionCandidates() {
    const summary = this.store.conversations.get(this.id);
    if (!summary || summary.leftSeq) return [];
    return summary.members.filter((m) => m.userId !== this.store.me);
  }

  /** Usernames of the members a message mentions (lowercase → id), for highlighting. */
  mentionTargets(message, summary) {
    if (!this.isGroup) return null;
    const targets = new Map();
    // The server resolved them; a message still in my outbox has none yet: the members now.
    const ids = message.mentions ?? (message.seq ? [] : this.mentionCandidates().map((m) => m.userId));
    for (const userId of ids) {
      const username = this.store.groups.usernameOf(userId, summary);
      if (username) targets.set(username.toLowerCase(), userId);
    }
    return targets;
  }

  close() {
    this.stopTyping();
    this.id = null;
    $("chat").hidden = true;
    $("chat-placeholder").hidden = false;
  }

  items() {
    const store = this.store;
    const thread = store.thread(this.id);
    const summary = store.conversations.get(this.id);
    const confirmed = [...thread.messages.values()].sort((a, b) => a.seq - b.seq);
    const pending = store.pendingFor(this.id).map((p) => ({
      id: p.clientId, clientId: p.clientId, senderId: store.me, text: p.text, createdAt: p.createdAt, status: p.status, error: p.error,
    }));
    const items = [];
    const group = this.isGroup;
    const name = (userId) => store.nameOf(userId, summary);
    const otherName = (summary && !group ? store.other(summary) : this.other)?.displayName || "Them";
    let day = null;
    for (const message of [...confirmed, ...pending]) {
      const key = dayKey(message.createdAt);
      if (key !== day) {
        day = key;
        items.push({ key: `day-${key}`, separator: dayLabel(message.createdAt) });
      }
      if (message.entry) {
        items.push({ key: `m-${message.clientId}`, message, entry: entryLines(message, name, store.me) });
        continue;
      }
      const mine = message.senderId === store.me;
      const previous = items[items.length - 1];
      // Consecutive messages of one sender on one day form a group: tighter, one tail (on the last).
      const groupStart = !previous?.message || Boolean(previous.entry) || previous.message.senderId !== message.senderId;
      if (!groupStart) previous.groupEnd = false;
      const senderName = mine ? "You" : group ? (name(message.senderId) ?? "…") : otherName;
      items.push({ key: `m-${message.clientId}`, message, mine, status: mine ? store.statusOf(message, summary) : null,
                   groupStart, groupEnd: true, senderName, showSender: group && !mine && groupStart,
                   info: group && mine && Boolean(message.seq), mentions: this.mentionTargets(message, summary) });
    }
    return items;
  }

  render() {
    if (!this.id) return;
    const store = this.store;
    const summary = store.conversations.get(this.id);
    renderHeader(this, summary);
    renderComposer(this, summary);
    const thread = store.thread(this.id);
    // Opened while offline: load the history once the connection is back.
    if (!thread.loaded && !thread.loading && store.connection === "online") store.loadThread(this.id);
    const all = this.items();
    $("chat-empty").hidden = !(thread.loaded && all.length === 0);
    $("older-loading").hidden = !thread.loadingOlder;

    // Older history arrived while the window began at the oldest row (the reader is at the top):
    // the window now begins at the new oldest row, so the reader can go on upwards.
    const oldest = (items) => items.find((item) => item.message)?.key;
    if (this.window?.start === 0 && oldest(all) !== oldest(this.window.all) && all.length > WINDOW) {
      this.windowEndKey = all[WINDOW - 1].key;
    }
    // The window: up to WINDOW rows ending at windowEndKey, or at the newest row when following.
    let end = all.length;
    if (this.windowEndKey != null) {
      const index = all.findIndex((item) => item.key === this.windowEndKey);
      if (index >= 0) end = Math.max(index + 1, Math.min(WINDOW, all.length));
      if (end >= all.length) this.windowEndKey = null;
    }
    const start = Math.max(0, end - WINDOW);
    this.window = { start, end, total: all.length, all };
    const items = all.slice(start, end);

    const scroller = $("messages");
    const list = $("message-list");
    const nearBottom = scroller.scrollHeight - scroller.scrollTop - scroller.clientHeight < 120;
    const lastKeyBefore = this.lastKey;
    const lastItem = all[all.length - 1];
    this.lastKey = lastItem?.key;
    const anchor = this.firstVisibleRow();
    const anchorOffset = anchor ? anchor.getBoundingClientRect().top : 0;
    reconcile(list, items, (item) => this.createRow(item), (node, item) => this.updateRow(node, item), (node) => this.rowRemoved(node));
    const following = this.windowEndKey == null;
    if (lastItem && lastItem.key !== lastKeyBefore && following && (nearBottom || this.stickToBottom || lastItem.mine)) {
      this.scrollToBottom(true);
    } else {
      // Rows came or went above or below: keep the row the reader was looking at where it was.
      if (anchor?.isConnected) scroller.scrollTop += anchor.getBoundingClientRect().top - anchorOffset;
      if (lastItem && lastKeyBefore !== undefined && lastItem.key !== lastKeyBefore) $("new-messages-pill").hidden = false;
    }
    this.markVisibleRead();
  }

  createRow(item) {
    const li = el("li");
    if (item.separator) {
      li.className = "separator";
      li.append(el("span", null, item.separator));
      return li;
    }
    const { message, mine } = item;
    li.dataset.seq = message.seq ?? "";
    if (item.entry) {
      // A membership change: a line of its own, read like any other row.
      li.className = "entry";
      this.updateRow(li, item);
      if (message.seq) this.observer.observe(li);
      return li;
    }
    li.className = `message ${mine ? "mine" : "theirs"}`;
    // Time and ticks sit inside the bubble, bottom right, after the text.
    const bubble = el("div", isEmojiOnly(message.text) ? "bubble emoji-only" : "bubble");
    const text = el("span", "text");
    text.dir = "auto";
    const meta = el("span", "meta");
    meta.append(el("time", null, clockTime(message.createdAt)));
    bubble.append(text, meta);
    li.append(bubble);
    if (!mine && message.seq) this.observer.observe(li);
    this.updateRow(li, item);
    return li;
  }

  /** A row left the window: it is no longer seen, so it no longer counts for read marking. */
  rowRemoved(li) {
    if (!li.dataset.seq) return;
    this.observer.unobserve(li);
    this.visibleSeqs.delete(Number(li.dataset.seq));
  }

  /** Slides the window by STEP rows towards older (-1) or newer (+1) messages; false at an end. */
  slideWindow(direction) {
    const { start, end, total, all } = this.window ?? {};
    if (total === undefined) return false;
    if (direction < 0 && start === 0) return false;
    if (direction > 0 && end >= total) return false;
    const newEnd = direction < 0 ? Math.max(Math.min(WINDOW, total), end - STEP) : Math.min(total, end + STEP);
    this.windowEndKey = newEnd >= total ? null : all[newEnd - 1].key;
    this.render();
    return true;
  }

  /** The name a screen reader gives a message: who, when, its status, then the text. */
  label(li, item) {
    const { message, mine } = item;
    const status = mine ? `, ${STATUS_LABELS[item.status].toLowerCase()}` : "";
    li.setAttribute("aria-label", `${item.senderName}, ${clockTime(message.createdAt)}${status}: ${message.text}`);
  }

  updateRow(li, item) {
    if (item.separator) return;
    if (item.entry) {
      const text = item.entry.join("\n");
      if (li.dataset.text !== text) {
        li.dataset.text = text;
        li.replaceChildren(...item.entry.map((line) => el("span", "entry-line", line)));
      }
      return;
    }
    li.classList.toggle("group-start", item.groupStart);
    li.classList.toggle("group-end", item.groupEnd);
    if (item.message.seq && li.dataset.seq !== String(item.message.seq)) li.dataset.seq = item.message.seq;
    // Names resolve late (people no longer in the group are fetched): the row follows.
    if (li.dataset.name !== item.senderName || li.dataset.showSender !== String(item.showSender)) {
      li.dataset.name = item.senderName;
      li.dataset.showSender = String(item.showSender);
      const bubble = li.querySelector(".bubble");
      bubble.querySelector(".sender")?.remove();
      if (item.showSender) {
        const sender = el("span", `sender sender-${senderColour(item.message.senderId)}`, item.senderName);
        sender.setAttribute("aria-hidden", "true");  // the row's label says it already
        bubble.prepend(sender);
      }
      this.label(li, item);
    }
    const mentionKey = item.mentions ? [...item.mentions.keys()].sort().join(" ") : "";
    if (li.dataset.mentionKey !== mentionKey || !li.dataset.rendered) {
      li.dataset.mentionKey = mentionKey;
      li.dataset.rendered = "1";
      appendWithMentions(li.querySelector(".text"), item.message.text, item.mentions, this.store.me);
    }
    if (item.info && !li.querySelector(".info-button")) {
      const info = el("button", "info-button", "i");
      info.type = "button";
      info.setAttribute("aria-label", "Message info");
      info.title = "Message info";
      li.querySelector(".meta").prepend(info);
    }
    if (!item.mine || li.dataset.status === item.status) return;
    li.dataset.status = item.status;
    this.label(li, item);
    const meta = li.querySelector(".meta");
    meta.querySelector(".status")?.remove();
    li.querySelector(".actions")?.remove();
    const mark = el("span", `status ${item.status}`, STATUS_MARKS[item.status]);
    mark.setAttribute("role", "img");
    mark.setAttribute("aria-label", STATUS_LABELS[item.status]);
    mark.title = item.message.error ?? STATUS_LABELS[item.status];
    meta.append(mark);
    if (item.status === "failed") {
      const actions = el("div", "actions");
      const retry = el("button", "retry", "Retry");
      retry.type = "button";
      retry.setAttribute("aria-label", `Retry sending: ${item.message.error ?? ""}`);
      retry.addEventListener("click", () => this.store.retry(item.message.clientId));
      const remove = el("button", "retry", "Delete");
      remove.type = "button";
      remove.setAttribute("aria-label", "Delete this unsent message");
      remove.addEventListener("click", () => this.store.remove(item.message.clientId));
      actions.append(el("span", "error", item.message.error ?? "Not sent"), retry, remove);
      li.append(actions);
    }
  }

  /**
   * The first message row at least partly inside the scroller's viewport (separators move, messages
   * do not). Rows are in vertical order, so a binary search reads the layout of ~14 rows, not 10,000.
   */
  firstVisibleRow() {
    const top = $("messages").getBoundingClientRect().top;
    const rows = $("message-list").children;
    let low = 0, high = rows.length - 1, found = -1;
    while (low <= high) {
      const middle = (low + high) >> 1;
      if (rows[middle].getBoundingClientRect().bottom > top) { found = middle; high = middle - 1; } else low = middle + 1;
    }
    for (let index = Math.max(found, 0); found >= 0 && index < rows.length; index++) {
      if (rows[index].classList.contains("message")) return rows[index];
    }
    return null;
  }

  /**
   * Lands on the newest message. Jumping to the bottom lays out rows that had only an estimated
   * height, which moves the bottom again, so it pins frame after frame until the height holds still.
   */
  scrollToBottom(hidePill) {
    const scroller = $("messages");
    this.stickToBottom = true;
    if (this.windowEndKey != null) {  // back from the history: the window follows the newest again
      this.windowEndKey = null;
      this.render();
    }
    if (hidePill) $("new-messages-pill").hidden = true;
    let lastHeight = -1, steady = 0, frames = 0;
    const pin = () => {
      if (!this.stickToBottom) return this.pinning = false;  // the reader scrolled away meanwhile
      this.pinning = true;
      scroller.scrollTop = scroller.scrollHeight;
      this.pinnedAt = scroller.scrollTop;
      steady = scroller.scrollHeight === lastHeight ? steady + 1 : 0;
      lastHeight = scroller.scrollHeight;
      if (steady < 3 && ++frames < 60) requestAnimationFrame(pin);
      else this.pinning = false;
    };
    pin();
  }

  onScroll() {
    const scroller = $("messages");
    // While pinning, a scroll to where we put it is ours; anywhere else, the reader's.
    if (this.pinning && Math.abs(scroller.scrollTop - this.pinnedAt) <= 2) return;
    this.pinning = false;
    const distance = scroller.scrollHeight - scroller.scrollTop - scroller.clientHeight;
    const atNewest = this.windowEndKey == null;
    this.stickToBottom = distance < 120 && atNewest;
    if (this.stickToBottom) $("new-messages-pill").hidden = true;
    if (!this.id) return;
    if (scroller.scrollTop < EDGE_PX && this.slideWindow(-1)) return;
    if (distance < EDGE_PX && !atNewest && this.slideWindow(+1)) return;
    if (scroller.scrollTop < 80 && this.window?.start === 0) this.store.loadThread(this.id, { older: true });
  }

  onVisibility(entries) {
    for (const entry of entries) {
      const seq = Number(entry.target.dataset.seq);
      if (entry.isIntersecting) this.visibleSeqs.add(seq);
      else this.visibleSeqs.delete(seq);
    }
    this.markVisibleRead();
  }

  /** Marks read up to the newest visible message of the other person, only in a focused, visible tab. */
  markVisibleRead() {
    if (!this.id || document.visibilityState !== "visible" || !document.hasFocus() || this.visibleSeqs.size === 0) return;
    this.store.markRead(this.id, Math.max(...this.visibleSeqs));
  }

  onInput() {
    const input = $("composer-input");
    input.style.height = "auto";
    input.style.height = `${input.scrollHeight}px`;
    this.mentions.update();
    const count = characterCount(normalizedText(input.value));
    const counter = $("composer-counter");
    counter.hidden = count <= COUNTER_THRESHOLD;
    counter.textContent = `${count.toLocaleString()} / ${MAX_CHARACTERS.toLocaleString()}`;
    counter.classList.toggle("over", count > MAX_CHARACTERS);
    $("send").disabled = !canSend(input.value);
    if (!this.id) return;
    if (input.value.trim() && Date.now() - this.lastTypingSent > 3000) {
      this.lastTypingSent = Date.now();
      this.store.sendTyping(this.id, true);
    } else if (!input.value.trim()) {
      this.stopTyping();
    }
  }

  stopTyping() {
    if (this.lastTypingSent && this.id) this.store.sendTyping(this.id, false);
    this.lastTypingSent = 0;
  }

  submit() {
    const input = $("composer-input");
    if (!this.id || !canSend(input.value)) return;
    this.windowEndKey = null;  // what I send shows at the bottom, wherever I was reading
    this.stickToBottom = true;
    this.store.send(this.id, this.other?.userId, normalizedText(input.value));
    input.value = "";
    this.stopTyping();
    this.onInput();
    this.stickToBottom = true;
  }
}
