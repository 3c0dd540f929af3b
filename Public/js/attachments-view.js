// A message's files in its bubble (chat-view.js builds the row): photos inline, videos as a frame
// with a play button, other files as a card with a Download link; in a message still uploading, a
// progress bar per file with Cancel (and Retry when it failed).
//
// The list keeps the reader's place by measuring rows (chat-view.js), so a photo's box has its
// final size before anything loads: the width and height the attachment carries give its aspect
// ratio (at most MAX_RATIO either way), capped to MAX_WIDTH × MAX_HEIGHT (and the bubble). The thumbnail (or the BlurHash's colour)
// fills it until the photo has loaded. URLs are asked for only for what comes near the screen.
import { averageColour } from "./blurhash.js";
import { el } from "./dom.js";
import { downloadUrl } from "./file-links.js";
import { sizeText } from "./format.js";

const MAX_WIDTH = 300;
const MAX_HEIGHT = 340;
const MAX_RATIO = 3;
const ICONS = { pdf: "📄", zip: "🗜️", gz: "🗜️", "7z": "🗜️", txt: "📝", mp3: "🎵", m4a: "🎵", ogg: "🎵", wav: "🎵" };

export const isMedia = (a) => a.kind === "video" || (a.kind === "image" && a.width > 0 && a.height > 0);
let current = null;  // the view of this sign-in: a view of an earlier one no longer answers clicks

export class AttachmentsView {
  /** `messageOf(li)` gives a row's message; `onOpen(message, index)` opens the viewer at a photo or video. */
  constructor({ list, scroller, links, uploads, messageOf, onOpen }) {
    Object.assign(this, { links, uploads, messageOf, onOpen });
    this.observer = new IntersectionObserver((entries) => this.onNear(entries), { root: scroller, rootMargin: "800px 0px" });
    current = this;
    list.addEventListener("click", (event) => { if (current === this) this.onClick(event); });
  }

  /** The attachments of `message` in `bubble`, before its text; rebuilt only when which files they are changes. */
  render(li, bubble, message) {
    const list = message.deletedAt ? [] : (message.attachments ?? []);
    const pending = !message.seq;
    const key = list.map((a) => `${a.id ?? a.key}:${a.kind}`).join("|") + (pending ? "|pending" : "");
    let box = bubble.querySelector(":scope > .attachments");
    if (li.dataset.attachments !== key) {
      li.dataset.attachments = key;
      if (box) this.forget(box);
      box?.remove();
      box = list.length ? this.build(list, pending) : null;
      if (box) bubble.insertBefore(box, bubble.querySelector(":scope > .text"));
    }
    if (box && pending) this.showProgress(box, message);
  }

  /** A row (or its files) left the page: nothing in it waits for a URL any more. */
  forget(node) {
    for (const target of node.querySelectorAll("[data-file-id]")) this.observer.unobserve(target);
  }

  build(list, pending) {
    const box = el("div", "attachments");
    const media = list.filter(isMedia);
    if (media.length) {
      const grid = el("div", media.length > 1 ? "media-grid" : "media-single");
      media.forEach((attachment, index) => grid.append(this.tile(attachment, index, media.length === 1, pending)));
      box.append(grid);
    }
    for (const attachment of list.filter((a) => !isMedia(a))) box.append(this.card(attachment, pending));
    return box;
  }

  /** A photo or video: its box at its final size, the thumbnail, then (sent) the photo itself. */
  tile(attachment, index, single, pending) {
    const tile = el(pending ? "div" : "button", `media ${attachment.kind}`);
    const name = attachment.name ?? "";
    if (!pending) {
      tile.type = "button";
      tile.dataset.index = index;
      tile.setAttribute("aria-label", attachment.kind === "video" ? `Play video ${name}` : `Open photo ${name}`);
    }
    if (single) {
      // A shape past 3:1 either way is shown cropped to 3:1 (the viewer shows all of it): a 1 × 20000
      // photo would otherwise be a column a million pixels tall, and a 20000 × 1 one no box at all.
      const width = attachment.width || 16, height = attachment.height || 9;
      const ratio = Math.min(MAX_RATIO, Math.max(1 / MAX_RATIO, width / height));
      const shownWidth = Math.max(width, height * ratio), shownHeight = shownWidth / ratio;
      const scale = Math.min(1, MAX_WIDTH / shownWidth, MAX_HEIGHT / shownHeight);
      tile.style.width = `${Math.max(64, Math.round(shownWidth * scale))}px`;
      tile.style.aspectRatio = `${ratio}`;
    }
    const colour = averageColour(attachment.placeholder);
    if (colour) tile.style.backgroundColor = colour;
    if (attachment.thumbnail) tile.append(image("thumb", attachment.thumbnail));
    if (attachment.kind === "image" && attachment.id) {
      const full = image("full");
      full.dataset.fileId = attachment.id;
      full.addEventListener("load", () => tile.classList.add("loaded"));
      full.addEventListener("error", () => this.failed(full, tile));
      tile.append(full);
      this.observer.observe(full);
    } else if (attachment.kind === "image" && pending && this.uploads.previewOf(attachment.key)) {
      const local = image("full", this.uploads.previewOf(attachment.key));  // the photo itself, from this device
      local.addEventListener("load", () => tile.classList.add("loaded"));
      tile.append(local);
    }
    if (attachment.kind === "video") {
      const play = el("span", "play", "▶");
      play.setAttribute("aria-hidden", "true");
      tile.append(play);
      if (attachment.durationMs) tile.append(el("span", "duration", duration(attachment.durationMs)));
    }
    if (pending) tile.append(this.progress(attachment));
    return tile;
  }

  /** Any other file: an icon, its name, size and type, and Download. */
  card(attachment, pending) {
    const card = el("div", "file-card");
    const icon = el("span", "file-icon", ICONS[extension(attachment.name)] ?? (attachment.kind === "audio" ? "🎵" : "📎"));
    icon.setAttribute("aria-hidden", "true");
    const info = el("span", "file-info");
    const name = el("span", "file-name", attachment.name);
    name.dir = "auto";
    name.title = attachment.name;
    info.append(name, el("span", "file-meta", `${sizeText(attachment.size ?? 0)} · ${typeLabel(attachment)}`));
    card.append(icon, info);
    if (attachment.id) {
      const link = el("a", "file-download", "Download");
      link.download = attachment.name;
      link.setAttribute("aria-label", `Download ${attachment.name}`);
      link.dataset.fileId = attachment.id;
      link.href = "#";  // a real URL once it comes near the screen (or on a click)
      card.append(link);
      this.observer.observe(link);
    }
    if (pending) card.append(this.progress(attachment));
    return card;
  }

  progress(attachment) {
    const box = el("div", "upload");
    box.dataset.key = attachment.key;
    const bar = el("progress");
    bar.setAttribute("aria-label", `Uploading ${attachment.name}`);
    const status = el("span", "upload-status");
    const retry = button("Retry", `Retry uploading ${attachment.name}`, "retry", attachment.key);
    const cancel = button("Cancel", `Cancel uploading ${attachment.name}`, "cancel", attachment.key);
    box.append(bar, status, retry, cancel);
    return box;
  }

  /** Each file's progress as the upload manager knows it (cheap: no rebuild). */
  showProgress(box, message) {
    for (const node of box.querySelectorAll(".upload")) {
      const attachment = message.attachments.find((a) => a.key === node.dataset.key);
      const state = this.uploads.state.get(node.dataset.key) ?? { phase: "preparing" };
      const done = !attachment || attachment.done || !message.uploading;
      node.hidden = done;
      if (done) continue;
      const [bar, status, retry] = node.children;
      const failed = state.phase === "failed";
      bar.hidden = failed;
      if (state.phase === "uploading" || (state.phase === "waiting" && state.total)) {
        bar.max = state.total || 1;
        bar.value = state.sent ?? 0;
      } else {
        bar.removeAttribute("value");  // preparing: indeterminate
      }
      const text = failed || state.phase === "waiting" ? state.error
        : state.phase === "uploading" ? `${sizeText(state.sent ?? 0)} of ${sizeText(state.total ?? 0)}` : "Preparing…";
      if (status.textContent !== text) status.textContent = text ?? "";
      status.classList.toggle("error", failed);
      retry.hidden = !failed;
    }
  }

  onNear(entries) {
    for (const entry of entries) {
      if (!entry.isIntersecting) continue;
      const node = entry.target;
      this.observer.unobserve(node);
      this.links.get(node.dataset.fileId).then((url) => {
        if (!url) { setTimeout(() => { if (node.isConnected) this.observer.observe(node); }, 5000); return; }  // try again later
        if (node.tagName === "IMG") node.src = url;
        else node.href = downloadUrl(url);
      });
    }
  }

  /** A photo that did not load gets one fresh URL (the old one may have expired); then it says so. */
  failed(img, tile) {
    if (img.dataset.retried) { tile.classList.add("broken"); return; }
    img.dataset.retried = "1";
    this.links.fresh(img.dataset.fileId).then((url) => { if (url) img.src = url; else tile.classList.add("broken"); });
  }

  async onClick(event) {
    const target = event.target;
    const action = target.closest(".upload button");
    if (action) {
      const clientId = this.messageOf(action.closest("li"))?.clientId;
      if (action.dataset.action === "retry") this.uploads.retry(clientId, action.dataset.key);
      else this.uploads.cancel(clientId, action.dataset.key);
      return;
    }
    const tile = target.closest("button.media");
    if (tile) { this.onOpen(this.messageOf(tile.closest("li")), Number(tile.dataset.index)); return; }
    const link = target.closest("a.file-download");
    if (link && !this.links.isFresh(link.dataset.fileId)) {
      // Not loaded yet, or about to expire: a fresh URL first, then the download.
      event.preventDefault();
      const url = await this.links.fresh(link.dataset.fileId);
      if (url) { link.href = downloadUrl(url); link.click(); }
    }
  }
}

function image(className, src) {
  const img = el("img", className);
  img.alt = "";
  img.decoding = "async";
  if (src) img.src = src;
  return img;
}

function button(text, label, action, key) {
  const node = el("button", "small", text);
  node.type = "button";
  node.setAttribute("aria-label", label);
  Object.assign(node.dataset, { action, key });
  return node;
}

const extension = (name) => (/\.([a-z0-9]{1,5})$/i.exec(name ?? "")?.[1] ?? "").toLowerCase();

/** What the server reads from a file's first bytes, by the extensions that claim it. */
const SNIFFED_BY_EXTENSION = {
  jpg: "image/jpeg", jpeg: "image/jpeg", png: "image/png", gif: "image/gif", webp: "image/webp",
  heic: "image/heic", heif: "image/heif", avif: "image/avif", mp4: "video/mp4", m4v: "video/x-m4v",
  mov: "video/quicktime", webm: "video/webm", ogv: "video/ogg", mp3: "audio/mpeg", m4a: "audio/mp4",
  ogg: "audio/ogg", oga: "audio/ogg", opus: "audio/ogg", wav: "audio/wav", pdf: "application/pdf",
  zip: "application/zip", gz: "application/gzip", "7z": "application/x-7z-compressed",
};
const MIME_LABELS = { "application/octet-stream": "FILE", "text/plain": "TEXT" };

/**
 * "PDF", "ZIP", or the type's subtype when the name has no extension. A name whose extension
 * claims a type the server found otherwise in the bytes (an HTML page named "photo.png") is
 * labelled by what the bytes are, so the card never vouches for the sender's name.
 */
function typeLabel(attachment) {
  const ext = extension(attachment.name);
  const mime = attachment.mimeType;
  const claimed = SNIFFED_BY_EXTENSION[ext];
  if (mime && (!ext || (claimed && claimed !== mime))) {
    return MIME_LABELS[mime] ?? mime.split("/")[1].replace(/^x-/, "").toUpperCase();
  }
  return (ext || "file").toUpperCase();
}

export function duration(ms) {
  const seconds = Math.round(ms / 1000);
  return `${Math.floor(seconds / 60)}:${String(seconds % 60).padStart(2, "0")}`;
}
