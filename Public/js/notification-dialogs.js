// The two notification dialogs. "Notifications" (from the account menu): notifications on this
// device (on, off, or why they cannot be), and what every notification shows. A chat's bell (in its
// header): which of its messages notify, and muting it. Choices apply at once; a refused one goes
// back to what the server has, with the reason. Both dialogs are made once and follow the signed-in
// account (attach at sign-in, detach at sign-out).
import { closeDialog, openDialog, restoreFocusOnClose } from "./dialog.js";
import { $, errorText } from "./dom.js";
import { muteText } from "./notifications.js";
import { PushError } from "./push.js";

const PUSH_TEXT = {
  checking: "Checking this browser…",
  insecure: "Notifications need a secure (https) connection to this server.",
  unsupported: "This browser cannot receive notifications.",
  denied: "Notifications are blocked for this site. Allow them in your browser's site settings, then come back here.",
  off: "Notifications are off on this device.",
  on: "Notifications are on for this device.",
  unavailable: "This server does not send notifications.",
};

function showError(id, text) {
  $(id).textContent = text ?? "";
  $(id).hidden = !text;
}

function pushErrorText(error) {
  if (error instanceof PushError) return error.message;
  if (error?.status === 404) return PUSH_TEXT.unavailable;
  return errorText(error);
}

export class NotificationSettingsDialog {
  constructor() {
    this.dialog = $("notifications-dialog");
    this.store = null;
    this.push = null;
    this.pending = 0;
    restoreFocusOnClose(this.dialog);
    $("notifications-close").addEventListener("click", () => closeDialog(this.dialog));
    $("push-toggle").addEventListener("click", () => this.toggle());
    $("preview-choice").addEventListener("change", (event) => this.choosePreview(event.target.value));
  }

  attach(store, push) {
    this.store = store;
    this.push = push;
    push.onChange(() => { if (this.push === push) this.render(); });
  }

  detach() {
    closeDialog(this.dialog);
    this.store = null;
    this.push = null;
  }

  open() {
    if (!this.store) return;
    showError("push-error", null);
    showError("preview-error", null);
    this.draw();
    const first = !$("push-toggle").hidden ? $("push-toggle") : this.dialog.querySelector("#preview-choice input:checked") ?? $("preview-full");
    openDialog(this.dialog, first);
    this.store.notifications.load();  // another device may have changed the preview
  }

  /** Drawn again on every change of the store or the push state, while it is open. */
  render() {
    if (this.dialog.open) this.draw();
  }

  draw() {
    if (!this.store || !this.push) return;
    const settings = this.store.notifications;
    const unavailable = settings.available === false;
    const state = unavailable ? "unavailable" : this.push.state;
    const text = PUSH_TEXT[state] ?? PUSH_TEXT.checking;
    if ($("push-state").textContent !== text && state !== "busy") $("push-state").textContent = text;
    const toggle = $("push-toggle");
    toggle.hidden = ["insecure", "unsupported", "denied", "unavailable"].includes(state);
    const on = state === "on" || (state === "busy" && toggle.dataset.on === "true");
    if (state !== "busy") toggle.dataset.on = String(on);
    const label = on ? "Turn off notifications" : "Turn on notifications";
    if (toggle.textContent !== label) toggle.textContent = label;
    toggle.classList.toggle("primary", !on);
    toggle.classList.toggle("secondary", on);
    // Busy, it keeps its focus (a disabled button would drop it) but does nothing.
    if (state === "busy" || state === "checking") toggle.setAttribute("aria-disabled", "true");
    else toggle.removeAttribute("aria-disabled");
    toggle.setAttribute("aria-busy", String(state === "busy"));
    $("preview-choice").disabled = unavailable;
    if (!this.pending) {
      for (const radio of $("preview-choice").querySelectorAll("input")) radio.checked = radio.value === settings.preview;
    }
  }

  toggle() {
    const push = this.push;
    if (!push || $("push-toggle").getAttribute("aria-disabled") === "true") return;
    showError("push-error", null);
    // turnOn asks for the permission first thing, inside this click.
    (push.state === "on" ? push.turnOff() : push.turnOn())
      .catch((error) => { if (this.push === push) showError("push-error", pushErrorText(error)); });
  }

  async choosePreview(preview) {
    const store = this.store;
    if (!store) return;
    showError("preview-error", null);
    this.pending++;
    try {
      await store.notifications.setPreview(preview);
    } catch (error) {
      if (this.store === store) showError("preview-error", errorText(error));
    } finally {
      this.pending--;
      this.render();
    }
  }
}

export class ConversationNotifications {
  constructor() {
    this.dialog = $("chat-notify-dialog");
    this.store = null;
    this.chatId = () => null;
    this.id = null;
    this.pending = 0;
    restoreFocusOnClose(this.dialog);
    this.dialog.addEventListener("close", () => { this.id = null; });
    $("chat-notify-close").addEventListener("click", () => closeDialog(this.dialog));
    $("chat-notify").addEventListener("click", () => this.open(this.chatId()));
    $("level-choice").addEventListener("change", (event) => this.change({ level: event.target.value }));
    for (const button of this.dialog.querySelectorAll("[data-mute]")) {
      button.addEventListener("click", () => this.change({ mute: button.dataset.mute }));
    }
  }

  attach(store, chatId) {
    this.store = store;
    this.chatId = chatId;
  }

  detach() {
    closeDialog(this.dialog);
    this.store = null;
    this.chatId = () => null;
    $("chat-notify").hidden = true;
  }

  /** A conversation that exists, with me in it, has settings (a new chat or a group I left has none). */
  settable(id) {
    const summary = id && this.store?.conversations.get(id);
    return Boolean(summary && !summary.leftSeq && this.store.notifications.available !== false);
  }

  open(id) {
    if (!this.settable(id)) return;
    this.id = id;
    showError("chat-notify-error", null);
    this.render();
    openDialog(this.dialog, this.dialog.querySelector("#level-choice input:checked") ?? $("level-all"));
  }

  render() {
    this.renderButton();
    if (!this.id || !this.store) return;
    if (!this.settable(this.id)) { closeDialog(this.dialog); return; }
    const store = this.store;
    const summary = store.conversations.get(this.id);
    const setting = store.notifications.of(this.id);
    const group = store.isGroup(summary);
    const title = store.titleOf(summary);
    if ($("chat-notify-for").textContent !== title) $("chat-notify-for").textContent = title;
    // Mentions are a group's; a direct chat offers all or nothing (unless another client chose mentions there).
    $("level-mentions-choice").hidden = !group && setting.level !== "mentions";
    if (!this.pending) {
      for (const radio of $("level-choice").querySelectorAll("input")) radio.checked = radio.value === setting.level;
    }
    const text = muteText(setting.mutedUntil);
    if ($("mute-state").textContent !== text) $("mute-state").textContent = text;
    const muted = store.notifications.isMuted(this.id);
    if (muted === $("unmute").hidden) {
      const hadFocus = document.activeElement === $("unmute");
      $("unmute").hidden = !muted;
      if (hadFocus) $("mute-8h").focus();
    }
  }

  /** The bell in the chat header: crossed out while the chat is quiet, and named so. */
  renderButton() {
    const button = $("chat-notify");
    const id = this.chatId();
    const show = this.settable(id);
    button.hidden = !show;
    if (!show) return;
    const quiet = this.store.notifications.quiet(id);
    const label = quiet === "muted" ? "Chat notifications, muted" : quiet === "off" ? "Chat notifications, off" : "Chat notifications";
    if (button.getAttribute("aria-label") !== label) {
      button.setAttribute("aria-label", label);
      button.title = label;
    }
    button.querySelector(".bell-on").toggleAttribute("hidden", Boolean(quiet));
    button.querySelector(".bell-off").toggleAttribute("hidden", !quiet);
  }

  async change(change) {
    const id = this.id;
    const store = this.store;
    if (!id || !store) return;
    showError("chat-notify-error", null);
    this.pending++;
    try {
      await store.notifications.change(id, change);
    } catch (error) {
      if (this.id === id) showError("chat-notify-error", errorText(error));
    } finally {
      this.pending--;
      this.render();
    }
  }
}
