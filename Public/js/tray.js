// The files chosen for the next message, in a tray above the composer: from the attach button (a
// file input), dropped on the chat, or pasted into the text box. A thumbnail for a photo, a card
// for anything else, each with a remove button; at most MAX_FILES. The text box is the caption.
// Additions, removals and refusals are announced (#tray-status); refusals also show (#tray-error).
import { $, el, reconcile } from "./dom.js";
import { safeFileName, sizeText } from "./format.js";
import { describe, reencodes } from "./image-prep.js";
import { maxSize } from "./tus.js";

export const MAX_FILES = 10;
let shared = null;

/**
 * The page's one tray (its elements and their listeners are the page's), for the chat view of this
 * sign-in: `onChange()` hears of every change (the send button follows); `isOpen()` says whether
 * files may be added now.
 */
export function trayFor({ onChange, isOpen }) {
  shared ??= new Tray();
  Object.assign(shared, { onChange, isOpen, items: [] });  // an earlier sign-in's files are not this one's (shown again at the next open)
  return shared;
}

class Tray {
  constructor() {
    this.items = [];  // { key, file, info (null until described), ready }
    this.onChange = () => {};
    this.isOpen = () => false;
    this.maxSize = null;
    maxSize().then((size) => { this.maxSize = size; });
    $("attach").addEventListener("click", () => $("file-input").click());
    $("file-input").addEventListener("change", () => {
      this.add([...$("file-input").files]);
      $("file-input").value = "";  // choosing the same file again is a change again
    });
    $("composer-input").addEventListener("paste", (event) => {
      const files = [...(event.clipboardData?.files ?? [])];
      if (!files.length) return;
      event.preventDefault();  // a copied file also brings its name as text: the file is what was meant
      this.add(files);
    });
    this.listenForDrops($("chat"));
    $("tray-list").addEventListener("click", (event) => {
      const button = event.target.closest(".tray-remove");
      if (button) this.remove(button.closest("li").dataset.key);
    });
  }

  get count() { return this.items.length; }

  listenForDrops(zone) {
    let depth = 0;
    const carriesFiles = (event) => [...(event.dataTransfer?.types ?? [])].includes("Files");
    const show = (on) => { $("drop-zone").hidden = !on; };
    zone.addEventListener("dragenter", (event) => {
      if (!carriesFiles(event) || !this.isOpen()) return;
      event.preventDefault();
      depth++;
      show(true);
    });
    zone.addEventListener("dragover", (event) => {
      if (!carriesFiles(event) || !this.isOpen()) return;
      event.preventDefault();  // allows the drop
      event.dataTransfer.dropEffect = "copy";
    });
    zone.addEventListener("dragleave", () => { depth = Math.max(0, depth - 1); if (!depth) show(false); });
    zone.addEventListener("drop", (event) => {
      depth = 0;
      show(false);
      if (!carriesFiles(event) || !this.isOpen()) return;
      event.preventDefault();
      this.add([...event.dataTransfer.files]);
      $("composer-input").focus();
    });
  }

  add(files) {
    const added = [], refused = [];
    for (const file of files) {
      const name = `“${safeFileName(file.name) || "file"}”`;
      if (this.items.length >= MAX_FILES) refused.push(`At most ${MAX_FILES} files go in one message: ${name} was not added.`);
      else if (this.maxSize && file.size > this.maxSize) refused.push(`${name} is too large to send (the limit is ${sizeText(this.maxSize)}).`);
      else if (!file.size) refused.push(`${name} is empty.`);
      else {
        const item = { key: crypto.randomUUID(), file, info: null };
        item.ready = describe(file).then((info) => { item.info = { ...info, reencode: info.kind === "image" && reencodes(file) }; this.render(); });
        this.items.push(item);
        added.push(safeFileName(file.name));
      }
    }
    this.showError(refused.join(" "));
    const count = this.items.length;
    const summary = `${count} ${count === 1 ? "file" : "files"} ready to send.`;
    this.say([added.length ? `Added ${added.join(", ")}. ${summary}` : "", refused.join(" ")].filter(Boolean).join(" "));
    this.render();
  }

  remove(key) {
    const index = this.items.findIndex((item) => item.key === key);
    if (index < 0) return;
    const [item] = this.items.splice(index, 1);
    this.render();
    this.say(`Removed ${safeFileName(item.file.name)}. ${this.items.length ? `${this.items.length} left.` : "No files to send."}`);
    // Focus goes to the next file's remove button, or back to the text box.
    const buttons = $("tray-list").querySelectorAll(".tray-remove");
    (buttons[Math.min(index, buttons.length - 1)] ?? $("composer-input")).focus();
  }

  clear() {
    this.items = [];
    $("send-as-file").checked = false;
    this.showError("");
    this.render();
  }

  /** Empties the tray and resolves to what it held, described: `[{file, info, asFile}]`. */
  async take() {
    const items = this.items;
    const asFile = $("send-as-file").checked;
    this.clear();
    await Promise.all(items.map((item) => item.ready));
    return items.map(({ file, info }) => ({ file, info, asFile }));
  }

  render() {
    $("tray").hidden = !this.items.length;
    $("send-as-file-option").hidden = !this.items.some((item) => item.info?.reencode ?? item.file.type.startsWith("image/"));
    reconcile($("tray-list"), this.items.map((item) => ({ key: item.key, item })), ({ item }) => this.row(item), (li, { item }) => this.update(li, item));
    this.onChange();
  }

  row(item) {
    const li = el("li", "tray-item");
    const remove = el("button", "tray-remove", "×");
    remove.type = "button";
    remove.setAttribute("aria-label", `Remove ${safeFileName(item.file.name)}`);
    li.append(el("span", "tray-preview"), el("span", "tray-name", safeFileName(item.file.name)), el("span", "tray-size", sizeText(item.file.size)), remove);
    this.update(li, item);
    return li;
  }

  update(li, item) {
    const thumbnail = item.info?.thumbnail ?? "";
    if (li.dataset.thumbnail === thumbnail && li.dataset.described === String(Boolean(item.info))) return;
    li.dataset.thumbnail = thumbnail;
    li.dataset.described = String(Boolean(item.info));
    const preview = li.querySelector(".tray-preview");
    if (thumbnail) preview.replaceChildren(Object.assign(el("img"), { src: thumbnail, alt: "" }));
    else {
      const icon = el("span", "tray-icon", item.info?.kind === "video" ? "🎥" : "📎");
      icon.setAttribute("aria-hidden", "true");
      preview.replaceChildren(icon);
    }
  }

  say(text) { if (text) $("tray-status").textContent = text; }

  showError(text) {
    $("tray-error").textContent = text;
    $("tray-error").hidden = !text;
  }
}
