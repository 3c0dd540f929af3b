// What the composer is doing besides writing a new message: answering one (a quote above the text
// box, with × to cancel; the send carries `replyToSeq`) or editing one of mine (its text in the box,
// "Editing" above; Enter saves, Escape or × cancels and gives back the draft that was there).
import { $ } from "./dom.js";
import { shownText } from "./format.js";

export class ComposerMode {
  /** `nameOf(userId)` gives the name a quote shows ("You" for me). */
  constructor(nameOf) {
    this.nameOf = nameOf;
    this.replying = null;  // the quote: { seq, senderId, preview, deleted }
    this.editing = null;   // { ref: {conversationId, seq, clientId}, original, draft }
  }

  get active() { return Boolean(this.replying || this.editing); }

  reply(quote) {
    this.finishEdit();
    this.replying = quote;
    this.show();
    focusInput();
  }

  edit(message) {
    const input = $("composer-input");
    const draft = this.editing ? this.editing.draft : input.value;
    this.replying = null;
    this.editing = { ref: { conversationId: message.conversationId, seq: message.seq ?? null, clientId: message.clientId }, original: message.text, draft };
    input.value = message.text;
    input.dispatchEvent(new Event("input"));
    this.show();
    focusInput();
  }

  /**
   * The message I am answering changed while I write (edited, deleted for everyone): the bar shows it
   * as it is now, as the quote in the sent reply will.
   */
  requote(quote) {
    const old = this.replying;
    if (!old || (old.preview === quote.preview && old.deleted === quote.deleted)) return;
    this.replying = { ...old, preview: quote.preview, deleted: quote.deleted };
    this.show();
  }

  /** Leaves the mode; an edit gives back the draft that was in the box before. */
  cancel() {
    this.replying = null;
    this.finishEdit();
    this.show();
  }

  finishEdit(restoreDraft = true) {
    if (!this.editing) return;
    const input = $("composer-input");
    if (restoreDraft) {
      input.value = this.editing.draft;
      input.dispatchEvent(new Event("input"));
    }
    this.editing = null;
  }

  /** The mode is used up (the reply sent, the edit saved). */
  done() {
    this.replying = null;
    this.editing = null;
    this.show();
  }

  /** The bar above the text box and the send button's name follow the mode. */
  show() {
    const bar = $("composer-context");
    bar.hidden = !this.active;
    bar.classList.toggle("editing", Boolean(this.editing));
    const send = $("send");
    send.textContent = this.editing ? "Save" : "Send";
    send.setAttribute("aria-label", this.editing ? "Save edit" : "Send");
    const input = $("composer-input");
    input.setAttribute("aria-describedby", this.active ? "composer-context-main composer-counter" : "composer-counter");
    if (!this.active) return;
    const cancel = $("composer-context-cancel");
    if (this.editing) {
      $("composer-context-title").textContent = "Editing";
      $("composer-context-text").textContent = this.editing.original.split("\n")[0];
      cancel.setAttribute("aria-label", "Cancel editing");
    } else {
      const quote = this.replying;
      $("composer-context-title").textContent = `Replying to ${this.nameOf(quote.senderId) ?? "…"}`;
      $("composer-context-text").textContent = quote.deleted ? "Deleted message" : shownText(quote.preview);
      cancel.setAttribute("aria-label", "Cancel reply");
    }
  }
}

function focusInput() {
  const input = $("composer-input");
  input.focus();
  input.setSelectionRange(input.value.length, input.value.length);
}
