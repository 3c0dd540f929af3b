// The menu of one message (the ARIA menu pattern): opened from the "⋯" button on hover, a long press
// on a touch screen, right-click, or the keyboard (Enter, the ContextMenu key or Shift+F10 on a
// focused message). Arrow keys move through its items, Home and End jump, Escape or Tab closes it and
// gives focus back to the message. Its items come from the chat (what may be done to the message);
// the menu only shows them and says which was chosen.
import { closeDialog, openDialog, restoreFocusOnClose } from "./dialog.js";
import { $, el } from "./dom.js";

export class MessageMenu {
  constructor(onChoose) {
    this.node = $("message-menu");
    this.onChoose = onChoose;  // (item, opener) → acts
    this.opener = null;
    this.node.addEventListener("keydown", (event) => this.onKey(event));
    this.node.addEventListener("click", (event) => {
      const button = event.target.closest("[role=menuitem]");
      if (button) this.choose(button);
    });
    // A press anywhere else closes it (and the press does what it does there).
    document.addEventListener("pointerdown", (event) => {
      if (this.isOpen && !this.node.contains(event.target) && !event.target.closest?.(".more-button")) this.close(false);
    }, true);
    window.addEventListener("resize", () => this.close(false));
  }

  get isOpen() { return !this.node.hidden; }

  /**
   * Shows `items` ({ id, text, label?, disabled?, pressed?, quick? }) next to `bubble`, for the row
   * `opener` (focus goes back there). Quick items (the reactions) share the first line.
   */
  open(opener, bubble, items) {
    this.opener = opener;
    this.items = items;
    const quick = el("div", "menu-quick");
    quick.setAttribute("role", "group");
    quick.setAttribute("aria-label", "React");
    const others = [];
    for (const item of items) {
      const button = el("button", item.quick ? "menu-emoji" : "menu-item", item.text);
      button.type = "button";
      button.tabIndex = -1;
      button.setAttribute("role", "menuitem");
      button.dataset.id = item.id;
      if (item.label) button.setAttribute("aria-label", item.label);
      if (item.label && item.quick) button.title = item.label;
      if (item.disabled) button.setAttribute("aria-disabled", "true");
      if (item.pressed) button.classList.add("chosen");
      if (item.danger) button.classList.add("danger");
      if (item.quick) quick.append(button);
      else others.push(button);
    }
    this.node.replaceChildren(...(quick.childElementCount ? [quick] : []), ...others);
    this.node.hidden = false;
    this.place(bubble);
    // The first item that can be chosen has focus (a message still sending cannot take reactions yet).
    (this.buttons().find((button) => !button.getAttribute("aria-disabled")) ?? this.buttons()[0])?.focus();
  }

  /** Below the bubble when there is room, else above; inside the window either way. */
  place(bubble) {
    const box = bubble.getBoundingClientRect();
    const { offsetWidth: width, offsetHeight: height } = this.node;
    const margin = 8;
    let top = box.bottom + 4;
    if (top + height > innerHeight - margin) top = box.top - height - 4;
    top = Math.max(margin, Math.min(top, innerHeight - height - margin));
    const mine = bubble.closest(".mine");
    let left = mine ? box.right - width : box.left;
    left = Math.max(margin, Math.min(left, innerWidth - width - margin));
    this.node.style.top = `${Math.round(top)}px`;
    this.node.style.left = `${Math.round(left)}px`;
  }

  buttons() { return [...this.node.querySelectorAll("[role=menuitem]")]; }

  close(restoreFocus = true) {
    if (!this.isOpen) return;
    this.node.hidden = true;
    this.node.replaceChildren();
    const opener = this.opener;
    this.opener = null;
    if (restoreFocus && opener?.isConnected) opener.focus();
  }

  choose(button) {
    if (button.getAttribute("aria-disabled")) return;
    const item = this.items.find((candidate) => candidate.id === button.dataset.id);
    const opener = this.opener;
    this.close(true);
    if (item) this.onChoose(item, opener);
  }

  onKey(event) {
    const buttons = this.buttons();
    const index = buttons.indexOf(document.activeElement);
    const go = (next) => { event.preventDefault(); buttons[(next + buttons.length) % buttons.length]?.focus(); };
    switch (event.key) {
      case "ArrowDown": case "ArrowRight": go(index + 1); break;
      case "ArrowUp": case "ArrowLeft": go(index - 1); break;
      case "Home": go(0); break;
      case "End": go(buttons.length - 1); break;
      case "Escape": case "Tab":
        event.preventDefault();
        event.stopPropagation();
        this.close(true);
        break;
      default:
        // A letter jumps to the next item starting with it (Reply, Copy, Edit, Delete).
        if (event.key.length === 1 && /\p{L}/u.test(event.key)) {
          const letter = event.key.toLowerCase();
          const order = [...buttons.slice(index + 1), ...buttons.slice(0, index + 1)];
          const found = order.find((button) => button.textContent.trim().toLowerCase().startsWith(letter));
          if (found) { event.preventDefault(); found.focus(); }
        }
    }
  }
}

/**
 * Asks how to delete a message: resolves "everyone", "me" or null (cancelled). `forEveryone` and
 * `forMe` say which choices there are.
 */
let deleteDialogReady = false;

export function askDelete({ forEveryone, forMe, text }) {
  const dialog = $("delete-dialog");
  if (!deleteDialogReady) { restoreFocusOnClose(dialog); deleteDialogReady = true; }
  $("delete-text").textContent = text;
  $("delete-for-everyone").hidden = !forEveryone;
  $("delete-for-me").hidden = !forMe;
  return new Promise((resolve) => {
    const done = (answer) => () => { cleanup(); closeDialog(dialog); resolve(answer); };
    const everyone = done("everyone"), me = done("me"), cancel = done(null), closed = () => { cleanup(); resolve(null); };
    const cleanup = () => {
      $("delete-for-everyone").removeEventListener("click", everyone);
      $("delete-for-me").removeEventListener("click", me);
      $("delete-cancel").removeEventListener("click", cancel);
      dialog.removeEventListener("close", closed);
    };
    $("delete-for-everyone").addEventListener("click", everyone);
    $("delete-for-me").addEventListener("click", me);
    $("delete-cancel").addEventListener("click", cancel);
    dialog.addEventListener("close", closed);
    openDialog(dialog, $("delete-cancel"));  // the safe choice has focus
  });
}

/** Puts text on the clipboard; true when it worked. */
export async function copyText(text) {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    // No clipboard API here (or no permission): the older way, through a selected text box.
    const area = el("textarea", "visually-hidden");
    area.value = text;
    area.setAttribute("readonly", "");
    area.setAttribute("aria-hidden", "true");
    document.body.append(area);
    area.select();
    let copied = false;
    try { copied = document.execCommand("copy"); } catch { /* not allowed */ }
    area.remove();
    return copied;
  }
}
