// "Message info": who has one of my group messages (read by, delivered to, waiting for). While open it
// follows the world, as WhatsApp's does:
// 1. The message as it is now: its text as edited, "deleted" once deleted for everyone, a file-only
//    message by its preview (the store's copy, not the one the dialog was opened with).
// 2. Names as they are now (a rename redraws it).
// 3. Who has it is read again when the group's cursors move (a `receiptSummary`), and every
//    REFRESH_MS while open: members' own receipts are not sent to clients in a group.
// 4. Only the newest read is shown: an answer for an earlier opening (another message) or an earlier
//    read is dropped.
import { closeDialog, openDialog, restoreFocusOnClose } from "./dialog.js";
import { $, el, errorText } from "./dom.js";
import { messagePreview } from "./format.js";
import { DELETED_TEXT } from "./message-actions.js";

const REFRESH_MS = 10000;

export class MessageInfo {
  constructor(store) {
    this.store = store;
    this.dialog = $("info-dialog");
    this.shown = null;   // { id, message, answer, error, cursors }
    this.request = 0;
    restoreFocusOnClose(this.dialog);
    $("info-close").addEventListener("click", () => closeDialog(this.dialog));
    this.dialog.addEventListener("close", () => { this.shown = null; this.request++; clearInterval(this.timer); });
  }

  /** Opens the dialog for my message `message` (with a seq) of conversation `id`. */
  open(id, message) {
    this.shown = { id, message, answer: null, error: null, cursors: null };
    this.drawn = null;
    $("info-body").replaceChildren(el("p", "muted", "Loading…"));
    this.draw();
    openDialog(this.dialog, $("info-close"));
    clearInterval(this.timer);
    this.timer = setInterval(() => this.read(), REFRESH_MS);
    this.read();
  }

  /** Rules 3 and 4. */
  async read() {
    const shown = this.shown;
    if (!shown || !this.dialog.open) { clearInterval(this.timer); return; }
    const request = ++this.request;
    shown.cursors = this.cursorsOf(shown.id);
    try {
      const answer = await this.store.api.messageInfo(shown.id, shown.message.seq);
      if (request !== this.request) return;
      Object.assign(shown, { answer, error: null });
    } catch (error) {
      if (request !== this.request) return;
      shown.error = errorText(error);
    }
    this.draw();
  }

  /** The store changed: rules 1 to 3. */
  refresh() {
    if (!this.shown || !this.dialog.open) return;
    if (this.cursorsOf(this.shown.id) !== this.shown.cursors) this.read();
    this.draw();
  }

  cursorsOf(id) {
    const summary = this.store.conversations.get(id);
    return `${summary?.everyoneDeliveredSeq ?? 0}/${summary?.everyoneReadSeq ?? 0}`;
  }

  draw() {
    const { id, answer, error } = this.shown;
    const message = this.store.threads.get(id)?.messages.get(this.shown.message.seq) ?? this.shown.message;
    const text = $("info-text");
    const shownText = message.deletedAt ? DELETED_TEXT : messagePreview(message);
    if (text.textContent !== shownText) text.textContent = shownText;
    text.classList.toggle("deleted", Boolean(message.deletedAt));
    if (error) {
      $("info-body").replaceChildren(el("p", "error", error));
      this.drawn = null;  // the next answer is drawn, even one like the last
      return;
    }
    if (!answer) return;
    const summary = this.store.conversations.get(id);
    const names = (ids) => ids.map((userId) => this.store.nameOf(userId, summary) ?? "Someone");
    const sections = [["Read by", answer.readBy], ["Delivered to", answer.deliveredTo], ["Waiting for", answer.pending]];
    const drawn = sections.map(([heading, ids]) => `${heading}: ${ids?.length ? names(ids).join("|") : ""}`).join("\n");
    if (this.drawn === drawn) return;  // unchanged: the live region stays quiet
    this.drawn = drawn;
    $("info-body").replaceChildren(...sections.flatMap(([heading, ids]) => {
      const list = el("ul", "info-list");
      list.setAttribute("aria-label", heading);
      list.append(...(ids?.length ? names(ids).map((name) => el("li", null, name)) : [el("li", "muted", "Nobody")]));
      return [el("h3", null, heading), list];
    }));
  }
}
