// The full-size viewer: a modal <dialog> named by the file's name, over one message's photos and
// videos. showModal() makes the page behind it inert (focus stays inside) and Escape closes it;
// focus goes back to the photo that opened it (dialog.js). Left and Right go between the message's
// photos; Download saves the file.
import { isMedia } from "./attachments-view.js";
import { closeDialog, openDialog, restoreFocusOnClose } from "./dialog.js";
import { $, el } from "./dom.js";
import { downloadUrl } from "./file-links.js";

let shared = null;

/** The page's one viewer (its dialog's listeners are the page's), reading URLs from `links` (this sign-in's). */
export function viewerFor(links) {
  shared ??= new Viewer();
  shared.close();
  shared.links = links;
  return shared;
}

class Viewer {
  constructor() {
    this.links = null;
    this.items = [];
    this.index = 0;
    this.generation = 0;
    const dialog = $("viewer");
    restoreFocusOnClose(dialog);
    $("viewer-close").addEventListener("click", () => closeDialog(dialog));
    $("viewer-prev").addEventListener("click", () => this.step(-1));
    $("viewer-next").addEventListener("click", () => this.step(1));
    dialog.addEventListener("keydown", (event) => {
      if (event.target.tagName === "VIDEO") return;  // its own keys (seeking)
      if (event.key === "ArrowLeft" || event.key === "ArrowRight") {
        event.preventDefault();
        this.step(event.key === "ArrowLeft" ? -1 : 1);
      }
    });
    // A click on the backdrop (outside the dialog's box) closes it, as Escape does.
    dialog.addEventListener("click", (event) => { if (event.target === dialog) closeDialog(dialog); });
    dialog.addEventListener("close", () => { this.generation++; $("viewer-media").replaceChildren(); });  // a playing video stops
  }

  get isOpen() { return $("viewer").open; }

  /** Opens at the `index`th photo or video of `message`. */
  open(message, index) {
    this.items = (message?.attachments ?? []).filter(isMedia);
    if (!this.items[index]) return;
    this.index = index;
    openDialog($("viewer"), $("viewer-close"));
    this.show();
  }

  step(direction) {
    const next = this.index + direction;
    if (next < 0 || next >= this.items.length) return;
    this.index = next;
    this.show();
  }

  async show() {
    const attachment = this.items[this.index];
    const generation = ++this.generation;
    const count = this.items.length;
    $("viewer-title").textContent = attachment.name;
    $("viewer-count").textContent = count > 1 ? `${this.index + 1} of ${count}` : "";
    $("viewer-prev").hidden = $("viewer-next").hidden = count < 2;
    $("viewer-prev").disabled = this.index === 0;
    $("viewer-next").disabled = this.index === count - 1;
    const download = $("viewer-download");
    download.hidden = true;
    download.removeAttribute("href");
    const media = $("viewer-media");
    media.replaceChildren(...(attachment.thumbnail ? [Object.assign(el("img", "viewer-thumb"), { src: attachment.thumbnail, alt: "" })] : []));
    const url = await this.links.get(attachment.id);
    if (generation !== this.generation) return;  // moved on, or closed, meanwhile
    if (!url) { media.replaceChildren(el("p", "error", "This file is not available.")); return; }
    download.href = downloadUrl(url);
    download.download = attachment.name;
    download.setAttribute("aria-label", `Download ${attachment.name}`);
    download.hidden = false;
    let node;
    if (attachment.kind === "video") {
      node = el("video");
      node.controls = true;
      node.setAttribute("aria-label", attachment.name);
      if (attachment.thumbnail) node.poster = attachment.thumbnail;
    } else {
      node = el("img");
      node.alt = attachment.name;
      if (attachment.width && attachment.height) Object.assign(node, { width: attachment.width, height: attachment.height });
    }
    node.className = "viewer-full";
    node.src = url;
    media.replaceChildren(node);
  }

  close() { closeDialog($("viewer")); }
}
