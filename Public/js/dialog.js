// Modal dialogs on the native <dialog>: showModal() makes the page behind it inert and traps focus,
// Escape closes it (the "cancel" event). Here: focus goes back to what opened it, and a small
// confirmation built on the same element.
import { $ } from "./dom.js";

const openers = new WeakMap();

/** Opens `dialog` modally, focusing `focus` (or its first control), and remembers the opener. */
export function openDialog(dialog, focus) {
  if (dialog.open) return;
  openers.set(dialog, document.activeElement);
  dialog.showModal();
  (focus ?? dialog.querySelector("[autofocus], input, button:not([disabled])"))?.focus();
}

export function closeDialog(dialog) {
  if (dialog.open) dialog.close();
}

/**
 * Every dialog gives focus back to its opener when it closes, however it closes. Browsers that
 * follow the current spec do it themselves at close(); the "close" event comes later, so it only
 * steps in when focus was left nowhere (and never takes it from what the page focused meanwhile).
 */
export function restoreFocusOnClose(dialog) {
  dialog.addEventListener("close", () => {
    const opener = openers.get(dialog);
    openers.delete(dialog);
    if (!focusLost()) return;
    // An opener hidden meanwhile (the bell of a group I was removed from) hands over to the messages.
    const target = shown(opener) && !opener.closest("dialog:not([open])") ? opener
      : [$("messages"), ...document.querySelectorAll("#list-pane button, #list-pane a")].find(shown);
    target?.focus();
  });
}

/**
 * A control hidden under the keyboard's focus inside an open dialog (the rename field when I stop
 * being an admin) leaves focus on the page behind the modal: it goes to the dialog's first control
 * that shows. Called after every redraw.
 */
export function keepFocusInOpenDialog() {
  const dialog = [...document.querySelectorAll("dialog[open]")].pop();
  if (!dialog) return;
  const active = document.activeElement;
  // Hidden under the focus: still focused until the browser's next style pass, or already let go
  // (the body). Focus a person put on the page themselves (a click on text) is theirs.
  const hidden = focusLost() ? lastFocused.get(dialog) : dialog.contains(active) ? active : null;
  if (!hidden || shown(hidden)) return;
  [...dialog.querySelectorAll("button, input, select, textarea, [tabindex]")]
    .find((control) => shown(control) && !control.disabled)?.focus({ preventScroll: true });
}

/** What had focus last in each dialog (keepFocusInOpenDialog). */
const lastFocused = new WeakMap();
document.addEventListener("focusin", (event) => {
  const dialog = event.target.closest?.("dialog[open]");
  if (dialog) lastFocused.set(dialog, event.target);
});

function focusLost() { return !document.activeElement || document.activeElement === document.body; }

function shown(element) { return Boolean(element?.isConnected && element.getClientRects().length); }

/** Asks a yes/no question; resolves true only when `confirmLabel` was chosen. */
export function confirmDialog({ title, text, confirmLabel }) {
  const dialog = $("confirm-dialog");
  $("confirm-title").textContent = title;
  $("confirm-text").textContent = text;
  $("confirm-ok").textContent = confirmLabel;
  return new Promise((resolve) => {
    const done = (answer) => () => { cleanup(); closeDialog(dialog); resolve(answer); };
    const ok = done(true), cancel = done(false), closed = () => { cleanup(); resolve(false); };
    const cleanup = () => {
      $("confirm-ok").removeEventListener("click", ok);
      $("confirm-cancel").removeEventListener("click", cancel);
      dialog.removeEventListener("close", closed);
    };
    $("confirm-ok").addEventListener("click", ok);
    $("confirm-cancel").addEventListener("click", cancel);
    dialog.addEventListener("close", closed);
    openDialog(dialog, $("confirm-cancel"));  // the safe choice has focus
  });
}
