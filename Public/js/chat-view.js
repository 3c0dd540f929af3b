// One open chat: header, message list (keyed rendering, date separators, statuses), scrolling,
// read marking and the composer. In a group: sender names, membership entries as lines of their
// own, mentions, "Message info", and a notice instead of the composer once I am out. Message
// actions: a menu per message (message-menu.js), reply quotes, reactions, "edited", tombstones
// (message-row.js), and the composer answering or editing (composer-mode.js). Files: the tray of
// files for the next message (tray.js), a message's photos and files (attachments-view.js), and the
// full-size viewer (viewer.js).
import { AttachmentsView } from "./attachments-view.js";
import { renderComposer, renderHeader } from "./chat-header.js";
import { ComposerMode } from "./composer-mode.js";
import { ComposerDrafts } from "./drafts.js";
import { $, el, reconcile, showName, toast } from "./dom.js";
import { EmojiPicker } from "./emoji-picker.js";
import { entryLines } from "./entries.js";
import { FileLinks } from "./file-links.js";
import { COUNTER_THRESHOLD, MAX_CHARACTERS, MAX_CODE_POINTS_PER_CHARACTER, attachmentWords, canSend, characterCount, clockTime, dayKey, dayLabel, isBlank, isEmojiOnly,
  messagePreview, normalizedText, overloadedCharacter, senderColour, shownText } from "./format.js";
import { MentionPicker, appendWithMentions } from "./mentions.js";
import { DELETED_TEXT, QUICK_REACTIONS, pendingMessage, quoteOf } from "./message-actions.js";
import { MessageMenu, askDelete, copyText } from "./message-menu.js";
import { SHOWN_REACTIONS, renderEdited, renderQuote, renderReactions, rowControlIndex } from "./message-row.js";
import { trayFor } from "./tray.js";
import { viewerFor } from "./viewer.js";

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
const LONG_PRESS_MS = 500;
const ROW_CONTROLS = ".quote, .reaction, .reactions-more, .info-button";  // a row's own buttons (rowControls)

export class ChatView {
  constructor(store, { onGroupInfo = () => {}, onMessageInfo = () => {} } = {}) {
    this.store = store;
    this.onGroupInfo = onGroupInfo;
    this.onMessageInfo = onMessageInfo;
    this.id = null;
    this.other = null;
    this.visibleSeqs = new Set();
    this.lastTypingSent = 0;
    this.drafts = new ComposerDrafts(store.me);
    window.addEventListener("pagehide", () => { this.keepDraft(); this.drafts.flush(); });
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
      } else if (event.key === "Escape" && this.mode.active) {
        event.preventDefault();
        this.mode.cancel();
      } else if (event.key === "ArrowUp" && !input.value && !event.isComposing && !this.mode.editing) {
        // Up in an empty composer edits my last message.
        const last = [...(this.window?.all ?? [])].reverse().find((item) => item.mine && this.store.actions.canEdit(item.message));
        if (last) { event.preventDefault(); this.mode.edit(last.message); }
      }
    });
    this.mode = new ComposerMode((userId) => this.displayName(userId));
    $("composer-context-cancel").addEventListener("click", () => { this.mode.cancel(); input.focus(); });
    this.menu = new MessageMenu((item, opener) => this.runCommand(item, opener));
    this.expandedReactions = new Set();  // keys of the rows whose folded reactions were shown ("+N")
    this.emojiPicker = new EmojiPicker();
    this.moreButton = el("button", "more-button", "⋯");
    this.moreButton.type = "button";
    this.moreButton.tabIndex = -1;  // the keyboard opens the menu from the focused message (Enter)
    this.moreButton.setAttribute("aria-label", "Message actions");
    this.moreButton.setAttribute("aria-haspopup", "menu");
    this.listenToRows();
    this.tray = trayFor({ onChange: () => this.onInput(), isOpen: () => Boolean(this.id) && !$("composer").hidden });
    this.links = new FileLinks(store.api);
    this.viewer = viewerFor(this.links);
    store.uploads.onFailure = (text) => this.tray.say(text);  // a file that failed is announced, as the tray's additions are
    this.attachments = new AttachmentsView({
      list: $("message-list"), scroller: $("messages"), links: this.links, uploads: store.uploads,
      messageOf: (li) => this.window?.all.find((item) => item.key === li?.dataset.key)?.message,
      onOpen: (message, index) => this.viewer.open(message, index),
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
    // The open menu stays beside its message while the list scrolls under it.
    $("messages").addEventListener("scroll", () => this.placeMenu(), { passive: true });
    for (const type of ["focus", "visibilitychange"]) {
      (type === "focus" ? window : document).addEventListener(type, () => this.markVisibleRead());
    }
  }

  /**
   * Opens the chat with `other` ({ userId, displayName }) in conversation `id` (which may not exist
   * yet); with `atSeq` (a search result), at that message instead of at the newest.
   */
  async open(id, other, atSeq = null) {
    if (this.id !== id) {
      this.stopTyping();
      this.keepDraft();
      this.drafts.flush();
      this.id = id;
      this.other = other;
      this.visibleSeqs.clear();
      this.observer.disconnect();
      this.stickToBottom = true;
      this.windowEndKey = null;
      this.window = null;
      this.detached = false;
      this.lastKey = undefined;
      $("message-list").replaceChildren();
      this.menu.close(false);
      this.mode.done();
      this.restoreDraft(id);
      this.tray.clear();  // files chosen in one chat are not sent to another
      this.viewer.close();
      this.mentions.enable(this.store.isGroup(id));
      this.onInput();
    }
    $("chat").hidden = false;
    $("chat-placeholder").hidden = true;
    this.fitInput();
    const thread = this.store.thread(id);
    if (atSeq != null) { await this.showMessage(atSeq); return; }
    // Opened from the list: at the newest messages (a window left in the history goes back to them).
    if (thread.hasNewer) await this.store.loadLatest(id);
    if (this.id !== id) return;
    this.render();
    // A chat that does not exist yet answers 404 and starts empty ("Say hello!").
    if (!thread.loaded) await this.store.loadThread(id);
    if (this.id !== id) return;
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
    this.menu.close(false);
    this.id = null;
    $("chat").hidden = true;
    $("chat-placeholder").hidden = false;
  }

  items() {
    const store = this.store;
    const thread = store.thread(this.id);
    const summary = store.conversations.get(this.id);
    // Each message as it will be once my queued actions are done (edited, deleted, hidden: gone).
    const actions = store.actions;
    // A window away from the live end shows its run of history only; my unsent messages belong at the end.
    const detached = thread.hasNewer;
    const confirmed = [...thread.messages.values()].filter((m) => !detached || m.seq <= thread.loadedTo)
      .sort((a, b) => a.seq - b.seq).map((m) => actions.current(m)).filter(Boolean);
    const pending = detached ? [] : store.pendingFor(this.id).map((p) => actions.current(pendingMessage(p, store.me))).filter(Boolean);
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
                   info: group && mine && Boolean(message.seq) && !message.deletedAt, canRetry: !summary?.leftSeq, mentions: this.mentionTargets(message, summary),
                   quote: this.quoteFor(message, thread) });
    }
    return items;
  }

  /** The quote a message shows above its text, with the quoted sender's name, or null. */
  quoteFor(message, thread) {
    let quote = message.replyTo;
    if (!quote && message.replyToSeq) {  // a reply still in my outbox: quoted from what is loaded
      const original = thread.messages.get(message.replyToSeq);
      const current = original && this.store.actions.current(original);
      quote = current ? quoteOf(current) : null;
    }
    if (quote && !quote.deleted && !quote.hidden && !quote.preview) {  // a photo without a caption: "📷 Photo"
      const original = thread.messages.get(quote.seq);
      if (original?.attachments?.length) quote = { ...quote, preview: messagePreview(original) };
    }
    return quote ? { ...quote, name: this.displayName(quote.senderId) ?? "…" } : null;
  }

  /** A person's name as this chat shows it: "You" for me. */
  displayName(userId) {
    if (userId === this.store.me) return "You";
    const summary = this.store.conversations.get(this.id);
    const other = this.isGroup ? null : (summary ? this.store.other(summary) : this.other);
    if (other?.userId === userId && other.displayName) return this.store.directName(other);  // with a look-alike's @username
    return this.store.nameOf(userId, summary);  // fetched once when not known yet
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
    $("newer-loading").hidden = !thread.loadingNewer;

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
    this.checkModes();
    // Away from the live end (and on the render that reaches it by scrolling), rows that come at the
    // bottom are history pages, not news: the reader stays where they are.
    const wasDetached = this.detached;
    this.detached = Boolean(thread.hasNewer);
    const following = this.windowEndKey == null && !this.detached && !wasDetached;
    if (lastItem && lastItem.key !== lastKeyBefore && following && (nearBottom || this.stickToBottom || lastItem.mine)) {
      this.scrollToBottom(true);
    } else {
      // Rows came or went above or below: keep the row the reader was looking at where it was.
      if (anchor?.isConnected) scroller.scrollTop += anchor.getBoundingClientRect().top - anchorOffset;
      if (lastItem && lastKeyBefore !== undefined && lastItem.key !== lastKeyBefore && !this.detached && !wasDetached) this.showPill(false);
    }
    if (this.detached) this.showPill(true);
    else if (wasDetached) $("new-messages-pill").hidden = true;
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
    li.tabIndex = -1;  // focusable, not a tab stop: arrow keys from the list move between rows
    // Time and ticks sit inside the bubble, bottom right, after the text.
    const bubble = el("div", "bubble");
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
    this.attachments.forget(li);
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

  /** The name a screen reader gives a message: who, when, its status, edited, whom it answers, then the text. */
  label(li, item) {
    const { message, mine } = item;
    const status = mine ? `, ${STATUS_LABELS[item.status].toLowerCase()}` : "";
    const edited = message.editedAt && !message.deletedAt ? ", edited" : "";
    const reply = item.quote && !message.deletedAt ? `, replying to ${item.quote.name}` : "";
    const files = message.deletedAt ? "" : attachmentWords(message.attachments);
    const content = message.deletedAt ? DELETED_TEXT : [files, message.text].filter(Boolean).join(". ");
    // The chips are not tab stops (the list is one): what they say is read with the row.
    // As the chips show them: folded past SHOWN_REACTIONS into "and N more" (renderReactions).
    const all = message.deletedAt ? [] : message.reactions ?? [];
    const named = all.length > SHOWN_REACTIONS && !this.expandedReactions.has(item.key) ? SHOWN_REACTIONS - 1 : all.length;
    const reacted = all.slice(0, named).map((r) => `${r.emoji} ${r.count}${r.mine ? " including you" : ""}`)
      .concat(named < all.length ? [`and ${all.length - named} more`] : []).join(", ");
    const reactions = reacted ? `. Reactions: ${reacted}` : "";
    const label = `${item.senderName}, ${clockTime(message.createdAt)}${status}${edited}${reply}: ${content}${reactions}`;
    if (li.getAttribute("aria-label") !== label) li.setAttribute("aria-label", label);
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
    const { message } = item;
    const deleted = Boolean(message.deletedAt);
    li.classList.toggle("deleted", deleted);
    if (message.seq && li.dataset.seq !== String(message.seq)) li.dataset.seq = message.seq;
    const bubble = li.querySelector(".bubble");
    // Names resolve late (people no longer in the group are fetched): the row follows.
    if (li.dataset.name !== item.senderName || li.dataset.showSender !== String(item.showSender)) {
      li.dataset.name = item.senderName;
      li.dataset.showSender = String(item.showSender);
      bubble.querySelector(".sender")?.remove();
      if (item.showSender) {
        const sender = showName(el("span", `sender sender-${senderColour(item.message.senderId)}`), item.senderName);
        sender.setAttribute("aria-hidden", "true");  // the row's label says it already
        bubble.prepend(sender);
      }
    }
    renderQuote(li, bubble, deleted ? null : item.quote);
    this.attachments.render(li, bubble, message);
    // The text, again only when it changed (an edit, a delete, mentions resolved).
    const mentionKey = item.mentions ? [...item.mentions.keys()].sort().join(" ") : "";
    const textKey = `${deleted ? "deleted" : "text"}|${mentionKey}|${message.text}`;
    if (li.dataset.textKey !== textKey) {
      li.dataset.textKey = textKey;
      const text = li.querySelector(".text");
      if (deleted) text.textContent = DELETED_TEXT;
      // U+2028 and U+2029 (line and paragraph separators) break the line as "\n" does (Chromium draws them as nothing).
      else appendWithMentions(text, shownText(message.text).replace(/[\u2028\u2029]/g, "\n"), item.mentions, this.store.me);
      bubble.classList.toggle("emoji-only", !deleted && !item.quote && !message.attachments?.length && isEmojiOnly(message.text));
    }
    renderEdited(li.querySelector(".meta"), Boolean(message.editedAt) && !deleted);
    renderReactions(li, deleted ? [] : (message.reactions ?? []), (ids) => this.reactorNames(ids), this.expandedReactions.has(item.key));
    this.label(li, item);
    if (!item.info) li.querySelector(".info-button")?.remove();  // deleted for everyone since
    else if (!li.querySelector(".info-button")) {
      const info = el("button", "info-button", "i");
      info.type = "button";
      info.tabIndex = rowControlIndex(li);
      info.setAttribute("aria-label", "Message info");
      info.title = "Message info";
      li.querySelector(".meta").prepend(info);
    }
    // The reason changes while a message stays failed (I am back in its group: store.sendableAgain),
    // and so does whether a retry could go: out of the group it can only be refused again.
    const reason = item.status === "failed" ? `${item.canRetry ? "" : "out|"}${item.message.error ?? ""}` : "";
    if (!item.mine || (li.dataset.status === item.status && (li.dataset.reason ?? "") === reason)) return;
    li.dataset.status = item.status;
    li.dataset.reason = reason;
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
      actions.append(el("span", "error", item.message.error ?? "Not sent"), ...(item.canRetry ? [retry] : []), remove);
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
    if (this.id && this.store.thread(this.id).hasNewer) { this.jumpToLatest(); return; }
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
    const detached = Boolean(this.id && this.store.thread(this.id).hasNewer);
    this.stickToBottom = distance < 120 && atNewest && !detached;
    if (this.stickToBottom) $("new-messages-pill").hidden = true;
    if (!this.id) return;
    if (scroller.scrollTop < EDGE_PX && this.slideWindow(-1)) return;
    if (distance < EDGE_PX && !atNewest && this.slideWindow(+1)) return;
    if (scroller.scrollTop < 80 && this.window?.start === 0) this.store.loadThread(this.id, { older: true });
    // The end of a window in the history: the next page after it (until the live end).
    if (distance < EDGE_PX && atNewest && detached) this.store.loadNewer(this.id);
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

  /** The text box grows with its text (up to its CSS max-height). Measured only while it is shown. */
  fitInput() {
    const input = $("composer-input");
    if (!input.offsetParent) return;
    input.style.height = "auto";
    input.style.height = `${input.scrollHeight}px`;
  }

  onInput() {
    const input = $("composer-input");
    this.fitInput();
    this.mentions.update();
    const count = characterCount(normalizedText(input.value));
    const counter = $("composer-counter");
    const overloaded = overloadedCharacter(input.value);
    counter.hidden = count <= COUNTER_THRESHOLD && !overloaded;
    counter.textContent = overloaded
      ? `A character carries more than ${MAX_CODE_POINTS_PER_CHARACTER} accents or marks: remove some to send.`
      : `${count.toLocaleString()} / ${MAX_CHARACTERS.toLocaleString()}`;
    counter.classList.toggle("over", count > MAX_CHARACTERS || overloaded);
    $("send").disabled = !this.canSubmit();
    if (!this.id) return;
    this.keepDraft();
    if (this.mode?.editing) { this.stopTyping(); return; }  // fixing a sent message is not typing a new one
    if (input.value.trim() && Date.now() - this.lastTypingSent > 3000) {
      this.lastTypingSent = Date.now();
      this.store.sendTyping(this.id, true);
    } else if (!input.value.trim()) {
      this.stopTyping();
    }
  }

  /** What this chat's composer holds, kept for when I come back: an edit in progress is not a draft. */
  keepDraft() {
    if (!this.id) return;
    this.drafts.keep(this.id, this.mode.editing ? this.mode.editing.draft : $("composer-input").value, this.mode.replying);
  }

  restoreDraft(id) {
    const draft = this.drafts.get(id);
    $("composer-input").value = draft?.text ?? "";
    if (draft?.replying) {
      this.mode.replying = draft.replying;
      this.mode.show();
    }
  }

  stopTyping() {
    if (this.lastTypingSent && this.id) this.store.sendTyping(this.id, false);
    this.lastTypingSent = 0;
  }

  /** Text to send, or files (the text their caption, possibly empty); an edit may empty a caption only. */
  canSubmit() {
    const value = $("composer-input").value;
    if (canSend(value)) return true;
    if (characterCount(normalizedText(value)) > MAX_CHARACTERS || overloadedCharacter(value)) return false;
    if (this.mode?.editing) return (this.store.actions.resolve(this.mode.editing.ref)?.attachments?.length ?? 0) > 0;
    return this.tray.count > 0;
  }

  submit() {
    const input = $("composer-input");
    if (!this.id || !this.canSubmit()) return;
    // A caption of only invisible characters is no caption, as the server stores it.
    const text = isBlank(normalizedText(input.value)) ? "" : normalizedText(input.value);
    if (this.mode.editing) {
      // Saving an edit: the message keeps its place; the draft from before comes back.
      const message = this.store.actions.resolve(this.mode.editing.ref);
      if (message && text !== message.text) this.store.actions.edit(message, text);
      else if (!message) toast("That message is gone.");
      this.mode.finishEdit();
      this.mode.done();
      this.stopTyping();
      return;
    }
    this.windowEndKey = null;  // what I send shows at the bottom, wherever I was reading
    this.stickToBottom = true;
    if (this.store.thread(this.id).hasNewer) this.jumpToLatest();
    const replyToSeq = this.mode.replying?.seq ?? null;
    if (this.tray.count) {
      const target = { conversationId: this.id, recipientId: this.other?.userId, text, replyToSeq };
      this.tray.take().then((items) => this.store.uploads.send({ ...target, items }));
    } else {
      this.store.send(this.id, this.other?.userId, text, replyToSeq);
    }
    this.mode.done();
    input.value = "";
    this.stopTyping();
    this.onInput();
    this.stickToBottom = true;
  }

  // MARK: message actions

  /** The reference an action keeps to a row's message, which may get its seq or change meanwhile. */
  refOf(li) {
    const item = this.window?.all.find((candidate) => candidate.key === li?.dataset.key);
    if (!item?.message || item.entry) return null;
    const { message } = item;
    return { conversationId: this.id, seq: message.seq ?? null, clientId: message.clientId };
  }

  listenToRows() {
    const list = $("message-list");
    const rowOf = (target) => target.closest?.("li.message");
    list.addEventListener("click", (event) => {
      const quote = event.target.closest(".quote");
      if (quote) {
        if (!quote.dataset.hidden) this.jumpTo(Number(quote.dataset.seq));
        return;
      }
      const more = event.target.closest(".reactions-more");
      if (more) {  // the folded reactions show (this chat's view of the message, until the page reloads)
        const li = rowOf(more);
        const hadFocus = more === document.activeElement;
        this.expandedReactions.add(li.dataset.key);
        this.render();
        // The keyboard goes on to the first chip it showed.
        if (hadFocus) li.querySelectorAll(".reaction")[SHOWN_REACTIONS - 1]?.focus();
        return;
      }
      const chip = event.target.closest(".reaction");
      if (chip) {
        const message = this.store.actions.resolve(this.refOf(rowOf(chip)) ?? {});
        if (message && this.store.actions.canReact(message)) this.store.actions.toggleReaction(message, chip.dataset.emoji);
        return;
      }
      if (event.target.closest(".more-button")) {
        const li = rowOf(event.target);
        if (this.menu.isOpen && this.menu.opener === li) this.menu.close(true);
        else this.openMenu(li);
      }
    });
    // Keyboard: the list is one tab stop (#messages); from it, Up or Down goes to the newest message in
    // view; then arrows move between messages, and Enter / the ContextMenu key / Shift+F10 open the menu.
    $("messages").addEventListener("keydown", (event) => {
      if (event.target !== $("messages") || (event.key !== "ArrowUp" && event.key !== "ArrowDown")) return;
      const row = this.lastVisibleRow();
      if (!row) return;
      event.preventDefault();
      row.focus();
    });
    list.addEventListener("keydown", (event) => {
      const li = rowOf(event.target);
      if (!li || event.target !== li) return;
      const rows = () => [...list.querySelectorAll(":scope > li.message")];
      if (event.key === "ArrowUp" || event.key === "ArrowDown") {
        const all = rows();
        const next = all[all.indexOf(li) + (event.key === "ArrowUp" ? -1 : 1)];
        event.preventDefault();
        if (next) { next.focus(); next.scrollIntoView({ block: "nearest" }); }
      } else if (event.key === "Home" || event.key === "End") {
        const all = rows();
        event.preventDefault();
        (event.key === "Home" ? all[0] : all[all.length - 1])?.focus();
      } else if (event.key === "Enter" || event.key === "ContextMenu" || (event.key === "F10" && event.shiftKey)) {
        event.preventDefault();
        this.openMenu(li);
      }
    });
    // Focus gone from the list: no row's buttons stay in the tab order (Shift+Tab from the
    // composer reaches the list, not a chip far up it).
    list.addEventListener("focusout", (event) => {
      if (list.contains(event.relatedTarget)) return;
      rowControls(this.tabRow, -1);
      this.tabRow = null;
    });
    list.addEventListener("focusin", (event) => {
      const li = rowOf(event.target);
      if (!li) return;
      this.showMoreButton(li);
      // The focused message's own buttons (quote, chips, info) follow it in the tab order; no other
      // row's do, so the list stays one tab stop however many there are.
      if (this.tabRow !== li) {
        rowControls(this.tabRow, -1);
        this.tabRow = li;
        rowControls(li, 0);
      }
    });
    // The "⋯" button follows the pointer (one button for the whole list, not one per row).
    list.addEventListener("pointerover", (event) => {
      if (event.pointerType !== "mouse") return;
      const li = rowOf(event.target);
      if (li) this.showMoreButton(li);
    });
    // A long press on a touch screen opens the menu; moving the finger (scrolling) does not.
    list.addEventListener("pointerdown", (event) => {
      if (event.pointerType === "mouse") return;
      const li = rowOf(event.target);
      if (!li || event.target.closest(".more-button")) return;  // on a quote or a chip too: the tap after it is swallowed
      clearTimeout(this.press?.timer);
      const press = { li, x: event.clientX, y: event.clientY, fired: false };
      press.timer = setTimeout(() => { press.fired = true; this.openMenu(li); }, LONG_PRESS_MS);
      this.press = press;
    });
    list.addEventListener("pointermove", (event) => {
      if (this.press && Math.hypot(event.clientX - this.press.x, event.clientY - this.press.y) > 10) this.cancelPress();
    });
    for (const type of ["pointerup", "pointercancel"]) {
      list.addEventListener(type, () => {
        if (this.press?.fired) this.swallowClickUntil = Date.now() + 800;  // the finger lifting is not a tap
        this.cancelPress();
      });
    }
    // No mouse events or click from the lifting finger either (they would focus and press what is under it).
    list.addEventListener("touchend", (event) => {
      if (Date.now() < (this.swallowClickUntil ?? 0)) { event.preventDefault(); this.swallowClickUntil = 0; }
    });
    document.addEventListener("click", (event) => {
      if (Date.now() < (this.swallowClickUntil ?? 0) && !this.menu.node.contains(event.target)) {
        this.swallowClickUntil = 0;
        event.preventDefault();
        event.stopPropagation();
      }
    }, true);
    // Right-click, or a touch screen's own long-press gesture: our menu instead of the browser's.
    list.addEventListener("contextmenu", (event) => {
      const li = rowOf(event.target);
      if (!li || event.target.closest("a")) return;
      event.preventDefault();
      if (!(this.menu.isOpen && this.menu.opener === li)) this.openMenu(li);
    });
  }

  cancelPress() {
    clearTimeout(this.press?.timer);
    this.press = null;
  }

  showMoreButton(li) {
    const bubble = li.querySelector(".bubble");
    if (bubble && this.moreButton.parentElement !== bubble) bubble.append(this.moreButton);
  }

  /** The newest message row the reader can see (where arrow keys from the list start). */
  lastVisibleRow() {
    const view = $("messages").getBoundingClientRect();
    const rows = [...$("message-list").querySelectorAll(":scope > li.message")];
    return rows.reverse().find((row) => { const box = row.getBoundingClientRect(); return box.top < view.bottom && box.bottom > view.top; })
      ?? rows[0];
  }

  /** What can be done to a message, as menu items. */
  menuItems(message, li) {
    const actions = this.store.actions;
    if (message.deletedAt) return message.seq ? [{ id: "hide", text: "Delete for me" }] : [];
    const canReact = actions.canReact(message);
    const mine = actions.myReaction(message);
    const items = QUICK_REACTIONS.map((emoji) => ({
      id: `react:${emoji}`, quick: true, text: emoji, pressed: mine === emoji, disabled: !canReact,
      label: mine === emoji ? `Remove reaction ${emoji}` : `React with ${emoji}`,
    }));
    items.push({ id: "more", quick: true, text: "+", label: "More reactions…", disabled: !canReact });
    items.push({ id: "reply", text: "Reply", disabled: !canReact });
    if (message.text) items.push({ id: "copy", text: "Copy" });  // a photo without a caption has nothing to copy
    if (actions.canEdit(message)) items.push({ id: "edit", text: "Edit" });
    // What the row's own small buttons do, for the keyboard (they are not tab stops: the list is one).
    const quote = li?.querySelector(".quote");
    if (quote && !quote.dataset.hidden) items.push({ id: "quote", text: "Go to quoted message" });
    if (li?.querySelector(".info-button")) items.push({ id: "info", text: "Message info" });
    items.push({ id: "delete", text: "Delete…", danger: true });
    return items;
  }

  openMenu(li) {
    const ref = this.refOf(li);
    const message = ref && this.store.actions.resolve(ref);
    if (!message) return;
    clearTimeout(this.press?.timer);  // the press itself stays known: the finger lifting is not a tap
    this.menuRef = ref;
    this.menu.open(li, li.querySelector(".bubble"), this.menuItems(message, li));
  }

  placeMenu() {
    const opener = this.menu.opener;
    if (!this.menu.isOpen) return;
    if (!opener?.isConnected) { this.menu.close(false); return; }
    this.menu.place(opener.querySelector(".bubble"));
  }

  async runCommand(item, opener) {
    const actions = this.store.actions;
    const ref = this.menuRef;
    const message = ref && actions.resolve(ref);
    if (!message) { toast("That message is gone."); return; }
    if (item.id.startsWith("react:")) {
      actions.toggleReaction(message, item.id.slice("react:".length));
    } else if (item.id === "more") {
      this.emojiPicker.open((emoji) => {
        const now = actions.resolve(ref);
        if (now && actions.canReact(now)) actions.toggleReaction(now, emoji);
      }, opener);
    } else if (item.id === "reply") {
      this.mode.reply(replyQuote(message));
    } else if (item.id === "quote") {
      const quote = opener.querySelector(".quote");
      if (quote && !quote.dataset.hidden) this.jumpTo(Number(quote.dataset.seq));
    } else if (item.id === "info") {
      if (message.seq && !message.deletedAt) this.onMessageInfo(this.id, message);
    } else if (item.id === "copy") {
      toast(await copyText(message.text) ? "Copied" : "Could not copy the text.");
    } else if (item.id === "edit") {
      this.mode.edit(message);
    } else if (item.id === "hide") {
      this.removeRow(opener, () => actions.hide(message));
    } else if (item.id === "delete") {
      const forEveryone = actions.canDeleteForEveryone(message);
      const forMe = Boolean(message.seq);
      const text = !message.seq ? "It has not been sent yet: nobody will get it."
        : forEveryone ? "Delete it for everyone in this chat, or only on your devices?"
        : "It will be gone from your devices. Others still see it.";
      const choice = await askDelete({ forEveryone, forMe, text });
      const now = actions.resolve(ref);
      if (!choice || !now) return;
      if (choice === "everyone") {
        if (now.seq) actions.deleteForEveryone(now);
        else this.removeRow(opener, () => actions.deleteForEveryone(now));
      } else {
        this.removeRow(opener, () => actions.hide(now));
      }
    }
  }

  /** Runs an action that takes a row away, then gives focus to the row next to it (or the list). */
  removeRow(li, act) {
    const rows = [...$("message-list").querySelectorAll(":scope > li.message")];
    const index = rows.indexOf(li);
    const neighbour = rows[index + 1] ?? rows[index - 1];
    const hadFocus = !document.activeElement || document.activeElement === document.body || document.activeElement === li;
    act();
    this.render();
    if (hadFocus && !li.isConnected) (neighbour?.isConnected ? neighbour : $("messages")).focus();
  }

  /**
   * Goes to a quoted message: loads older pages until it is there, brings it into the window, scrolls
   * it to the middle, focuses it and highlights it for a moment.
   */
  async jumpTo(seq) {
    const id = this.id;
    const thread = this.store.thread(id);
    const oldest = () => Math.min(...thread.messages.keys());
    while (this.id === id && !thread.messages.has(seq) && thread.hasOlder && thread.messages.size && oldest() > seq) {
      const count = await this.store.loadThread(id, { older: true });
      if (!count && thread.hasOlder) break;  // could not load (offline): stop rather than spin
    }
    if (this.id !== id) return;
    this.render();
    this.highlight(seq, "The original message is not available.");
  }

  /**
   * Opens the chat at a message (a search result): the history around it is loaded when it is not
   * in what the thread holds (the thread then leaves the live end: see store.js), the window is put
   * around it, and it is scrolled to the middle, focused and highlighted. Scrolling then loads older
   * pages upwards and newer ones downwards, to the live end.
   */
  async showMessage(seq) {
    const id = this.id;
    const store = this.store;
    if (!store.holds(id, seq)) {
      this.windowEndKey = null;
      this.stickToBottom = false;
      if (!await store.loadAround(id, seq)) {
        if (this.id === id) { toast("Could not load that message."); this.render(); }
        return;
      }
    }
    if (this.id !== id) return;
    this.stickToBottom = false;
    this.render();
    this.highlight(seq, "That message is not available any more.");
  }

  /** Puts the window around a loaded message, scrolls it to the middle, focuses and flashes it. */
  highlight(seq, missing) {
    const all = this.window.all;
    const index = all.findIndex((item) => item.message?.seq === seq && !item.entry);
    if (index < 0) { toast(missing); return; }
    // A window with the message in it, a few rows after it when there are that many.
    const end = Math.min(all.length, Math.max(index + 1 + STEP, WINDOW));
    this.windowEndKey = end >= all.length ? null : all[end - 1].key;
    this.stickToBottom = false;
    this.render();
    const li = [...$("message-list").children].find((row) => row.dataset.key === all[index].key);
    if (!li) return;
    li.scrollIntoView({ block: "center" });
    li.focus({ preventScroll: true });
    li.classList.remove("flash");
    void li.offsetWidth;  // restart the highlight when it is shown again
    li.classList.add("flash");
    clearTimeout(this.flashTimer);
    this.flashTimer = setTimeout(() => li.classList.remove("flash"), 1600);
  }

  /** From a window in the history back to the newest messages. */
  async jumpToLatest() {
    const id = this.id;
    this.windowEndKey = null;
    this.stickToBottom = true;
    await this.store.loadLatest(id);
    if (this.id !== id) return;
    this.render();
    // Still detached only when the read failed: the pill stays to try again (no loop of reads).
    if (!this.store.thread(id).hasNewer) this.scrollToBottom(true);
  }

  /** The pill under the list: "Jump to latest" away from the live end, else "New messages". */
  showPill(detached) {
    const pill = $("new-messages-pill");
    const text = detached ? "Jump to latest ↓" : "New messages ↓";
    if (pill.textContent !== text) pill.textContent = text;
    pill.hidden = false;
  }

  /**
   * An edit whose message is gone or deleted meanwhile ends; a reply's bar follows its message (edited,
   * deleted); out of the group, the composer's mode ends.
   */
  checkModes() {
    if (!this.mode.active) return;
    if ($("composer").hidden) { this.mode.cancel(); return; }  // an edit cut short gives the draft back
    const replying = this.mode.replying;
    if (replying) {
      // Not loaded any more, or hidden by me: the bar keeps what it showed.
      const original = this.store.thread(this.id).messages.get(replying.seq);
      const current = original && this.store.actions.current(original);
      if (current) this.mode.requote(replyQuote(current));
    }
    const editing = this.mode.editing;
    if (editing) {
      const message = this.store.actions.resolve(editing.ref);
      if (!message || message.deletedAt) {
        this.mode.cancel();
        toast("The message you were editing was deleted.");
      }
    }
  }

  /** Display names of people who reacted, for a chip's tooltip. */
  reactorNames(ids) {
    return ids.map((userId) => this.displayName(userId) ?? "Someone");
  }
}

/** Makes a row's own buttons tab stops (0) or not (-1). */
function rowControls(li, tabIndex) {
  for (const button of li?.querySelectorAll(ROW_CONTROLS) ?? []) button.tabIndex = tabIndex;
}

/** What the composer quotes of a message I answer: a photo without a caption as "📷 Photo". */
function replyQuote(message) {
  const quote = quoteOf(message);
  return quote.preview || !message.attachments?.length ? quote : { ...quote, preview: messagePreview(message) };
}
