// Mentions in groups: "@username" of a member. The server resolves them into `message.mentions`;
// here they are highlighted in the text, and typing "@" in the composer offers the members in a
// listbox (the ARIA combobox pattern: arrows move, Enter or Tab picks, Escape closes). A <textarea>
// may not itself take role=combobox, so its wrapper is the combobox (the ARIA 1.1 form, with the
// text box and the listbox inside it) and the text box points at the active option.
import { el } from "./dom.js";

// "@" not after a letter, digit or "_" (so e-mail addresses mention nobody), then a username's
// characters, as the server reads them (GroupValidation.mentionedUsernames).
const MENTION = /(?<![\p{L}\p{N}_])@([A-Za-z0-9_.]+)/gu;
const TYPING_MENTION = /(?<![\p{L}\p{N}_])@([A-Za-z0-9_.]*)$/u;
const MAX_OPTIONS = 8;

/**
 * Fills `parent` with `text`, the mentions of `usernames` (lowercase username → user id) in
 * `<span class="mention">` (and `mention me` for mine). Everything stays text: no markup is parsed.
 */
export function appendWithMentions(parent, text, usernames, me) {
  if (!usernames?.size || !text.includes("@")) { parent.textContent = text; return; }
  parent.replaceChildren();
  let last = 0;
  for (const match of text.matchAll(MENTION)) {
    const name = match[1].replace(/\.+$/, "");  // a trailing "." ends the sentence, not the name
    const userId = usernames.get(name.toLowerCase());
    if (!userId) continue;
    if (match.index > last) parent.append(document.createTextNode(text.slice(last, match.index)));
    parent.append(el("span", userId === me ? "mention me" : "mention", `@${name}`));
    last = match.index + 1 + name.length;
  }
  if (last < text.length) parent.append(document.createTextNode(text.slice(last)));
}

export class MentionPicker {
  /** `candidates()` lists the members one may mention ({userId, username, displayName}). */
  constructor(box, input, list, candidates) {
    this.box = box;
    this.input = input;
    this.list = list;
    this.candidates = candidates;
    this.enabled = false;
    this.options = [];
    this.active = -1;
    this.dismissedAt = null;  // the "@" whose listbox Escape closed: it stays closed for that word
    list.addEventListener("mousedown", (event) => event.preventDefault());  // the caret stays in the box
    list.addEventListener("click", (event) => {
      const option = event.target.closest("[role=option]");
      if (option) this.pick(Number(option.dataset.index));
    });
    input.addEventListener("click", () => this.update());
    input.addEventListener("keyup", (event) => { if (event.key === "ArrowLeft" || event.key === "ArrowRight") this.update(); });
    input.addEventListener("blur", () => this.close());
  }

  /** In a group the composer is a combobox; in a 1:1 chat a plain text box. */
  enable(on) {
    if (on === this.enabled) return;
    this.enabled = on;
    this.close();
    const attributes = [
      [this.box, { role: "combobox", "aria-haspopup": "listbox", "aria-expanded": "false", "aria-label": "Message" }],
      [this.input, { "aria-autocomplete": "list", "aria-controls": this.list.id }],
    ];
    for (const [node, values] of attributes) {
      for (const [name, value] of Object.entries(values)) {
        if (on) node.setAttribute(name, value);
        else node.removeAttribute(name);
      }
    }
  }

  get isOpen() { return !this.list.hidden; }

  /** The "@word" being typed just before the caret, or null. */
  query() {
    const { value, selectionStart, selectionEnd } = this.input;
    if (selectionStart !== selectionEnd) return null;
    const match = value.slice(0, selectionStart).match(TYPING_MENTION);
    return match ? { start: selectionStart - match[0].length, text: match[1].toLowerCase() } : null;
  }

  /** Called on every input: opens, filters or closes the listbox. */
  update() {
    if (!this.enabled) return;
    const query = this.query();
    if (!query || query.start === this.dismissedAt) {
      if (!query) this.dismissedAt = null;
      this.close();
      return;
    }
    this.dismissedAt = null;
    const words = (member) => [member.username, ...member.displayName.toLowerCase().split(/\s+/)];
    this.options = this.candidates()
      .filter((member) => words(member).some((word) => word.toLowerCase().startsWith(query.text)))
      .slice(0, MAX_OPTIONS);
    if (this.options.length === 0) { this.close(); return; }
    this.active = Math.min(Math.max(this.active, 0), this.options.length - 1);
    this.list.replaceChildren(...this.options.map((member, index) => {
      const option = el("li", "mention-option");
      option.id = `mention-option-${index}`;
      option.dataset.index = index;
      option.setAttribute("role", "option");
      option.append(el("span", "mention-name", member.displayName), el("span", "muted", ` @${member.username}`));
      return option;
    }));
    this.list.hidden = false;
    this.box.setAttribute("aria-expanded", "true");
    this.highlight();
  }

  highlight() {
    [...this.list.children].forEach((option, index) => option.setAttribute("aria-selected", String(index === this.active)));
    const current = this.list.children[this.active];
    if (current) {
      this.input.setAttribute("aria-activedescendant", current.id);
      current.scrollIntoView({ block: "nearest" });
    }
  }

  close() {
    if (this.list.hidden && this.active === -1) return;
    this.list.hidden = true;
    this.list.replaceChildren();
    this.options = [];
    this.active = -1;
    this.input.removeAttribute("aria-activedescendant");
    if (this.enabled) this.box.setAttribute("aria-expanded", "false");
  }

  /** Handles a key in the composer; true when it was the listbox's (the composer must not act on it). */
  handleKey(event) {
    if (!this.isOpen || event.isComposing) return false;
    const count = this.options.length;
    switch (event.key) {
      case "ArrowDown": this.active = (this.active + 1) % count; this.highlight(); break;
      case "ArrowUp": this.active = (this.active - 1 + count) % count; this.highlight(); break;
      case "Enter":
      case "Tab":
        if (event.shiftKey) return false;
        this.pick(this.active);
        break;
      case "Escape":
        this.dismissedAt = this.query()?.start ?? null;
        this.close();
        event.stopPropagation();
        break;
      default: return false;
    }
    event.preventDefault();
    return true;
  }

  /** Replaces the "@word" before the caret with "@username " and tells the composer. */
  pick(index) {
    const member = this.options[index];
    const query = this.query();
    if (!member || !query) { this.close(); return; }
    const { value, selectionStart } = this.input;
    const inserted = `@${member.username} `;
    this.input.value = value.slice(0, query.start) + inserted + value.slice(selectionStart).replace(/^ /, "");
    const caret = query.start + inserted.length;
    this.input.setSelectionRange(caret, caret);
    this.close();
    this.input.dispatchEvent(new Event("input"));
  }
}
