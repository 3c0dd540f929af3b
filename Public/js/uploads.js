// Messages with files: each file is uploaded (tus.js), then the message is sent once with all its
// attachments, over the outbox like any message (store.js).
//
// Rules:
// 1. Sending puts each file in IndexedDB first (upload-db.js), then the message in the outbox with
//    `uploading: true` and its attachments (name, size, kind, thumbnail … and a `key` per file). The
//    outbox does not send it while it is uploading; it shows at once, with a progress bar per file.
// 2. A photo is re-encoded just before its upload (image-prep.js), unless it was sent "as file".
// 3. The upload URL is kept with the file as soon as it exists. After a network error, a 409, or a
//    reload, HEAD says where the server is, and the upload goes on from there; a 404 (the upload
//    expired or was removed) starts it again. Rate limits wait as the server says. The upload is
//    kept twice: its id in the outbox (written at once) and its URL in the record (IndexedDB, whose
//    write of the whole file again takes a while). A reload between the two leaves one of them,
//    which is enough: either names the upload, and the send always names the upload sent to.
// 4. A file done: `done` and its `uploadId` in the outbox, its record gone. All done: `uploading`
//    ends and the outbox sends it, with the clientId it had from the start, so it arrives once.
// 5. Cancel (or deleting the pending message) stops the upload and DELETEs it on the server.
// 6. Two tabs never upload one file at once (a Web Lock per file).
// 7. Each file's record also holds its whole message (`message`): the outbox lives in localStorage,
//    which the browser writes to disk lazily, IndexedDB when asked. After a crash that kept the files
//    and lost the outbox entry, the message is put back in the outbox (same clientId) and goes on.
// 8. Out of the message's group, its files stop uploading and fail with the reason (`refuseIfOut`).
import { safeFileName } from "./format.js";
import { reencode } from "./image-prep.js";
import { CHUNK, TusError, append, create, offsetOf, remove, sha256 } from "./tus.js";
import { allRecords, deleteRecord, readRecord, saveRecord } from "./upload-db.js";

const MAX_RESTARTS = 3;

/** An upload's path on this origin, and back (tus.js `create`: `/v1/uploads/{id}`). */
const uploadUrl = (id) => `/v1/uploads/${encodeURIComponent(id)}`;
const uploadIdOf = (url) => decodeURIComponent(url.split("/").pop());

export class Uploads {
  constructor(store) {
    this.store = store;
    this.records = new Map();  // key → its IndexedDB record, as this page knows it
    this.state = new Map();    // key → { phase: "preparing" | "uploading" | "waiting" | "failed", sent, total, error }
    this.running = new Map();  // key → AbortController
    this.arriving = new Set(); // keys of files being stored, whose message is not in the outbox yet
    this.previews = new Map(); // key → a blob: URL of a photo being sent, which its pending message shows
    this.onFailure = () => {};  // (text) a file could not be uploaded
  }

  get token() { return this.store.session.token; }

  /**
   * On start: records no message needs any more go, those of a message the outbox lost bring it
   * back (rule 7); every message still uploading goes on.
   */
  async resume() {
    const records = await allRecords().catch(() => []);
    const wanted = new Set(this.pendingKeys());
    const inOutbox = new Set(this.store.outbox.map((entry) => entry.clientId));
    const lost = new Map();  // clientId → the surviving records of a message missing from the outbox
    for (const record of records) {
      if (record.userId !== this.store.me || this.arriving.has(record.key) || this.records.has(record.key)) continue;
      if (wanted.has(record.key)) this.records.set(record.key, record);
      else if (record.message && !inOutbox.has(record.clientId)) lost.set(record.clientId, [...(lost.get(record.clientId) ?? []), record]);
      else deleteRecord(record.key);
    }
    for (const found of lost.values()) this.restore(found);
    for (const entry of this.store.outbox) if (entry.uploading) this.goOn(entry);
  }

  /** Rule 7: the message of these records back in the outbox, with the files that are still there. */
  restore(found) {
    const { conversationId, recipientId, text, replyToSeq, createdAt, attachments } = found[0].message;
    const keys = new Set(found.map((record) => record.key));
    for (const record of found) this.records.set(record.key, record);
    this.store.send(conversationId, recipientId, text, replyToSeq, {
      clientId: found[0].clientId, createdAt, attachments: attachments.filter((attachment) => keys.has(attachment.key)),
    });
  }

  stop() {
    for (const controller of this.running.values()) controller.abort();
    this.running.clear();
  }

  pendingKeys() {
    return this.store.outbox.flatMap((entry) => (entry.uploading ? entry.attachments.filter((a) => !a.done).map((a) => a.key) : []));
  }

  /** A message with files (`items`: `{file, info, asFile}` from the tray). */
  async send({ conversationId, recipientId, text, replyToSeq, items }) {
    const clientId = crypto.randomUUID();
    const attachments = [], records = [];
    for (const { file, info, asFile } of items) {
      const key = crypto.randomUUID();
      this.arriving.add(key);
      const encode = !asFile && info.kind === "image" && info.reencode;
      records.push({ key, userId: this.store.me, clientId, conversationId, caption: text, name: safeFileName(file.name), size: file.size,
                     type: file.type, blob: file, encode, original: Boolean(asFile) });
      attachments.push({ key, name: safeFileName(file.name), size: file.size, mimeType: file.type, kind: info.kind, width: info.width, height: info.height,
                         durationMs: info.durationMs, thumbnail: info.thumbnail, placeholder: info.placeholder });
    }
    const createdAt = Date.now();
    for (const record of records) {
      record.message = { conversationId, recipientId, text, replyToSeq, createdAt, attachments };  // rule 7
      this.records.set(record.key, record);
      await saveRecord(record).catch(() => {});  // no IndexedDB: it still uploads, without surviving a reload
    }
    const entry = this.store.send(conversationId, recipientId, text, replyToSeq, { clientId, attachments, createdAt });
    for (const { key } of attachments) this.arriving.delete(key);
    this.goOn(entry);
  }

  goOn(entry) {
    for (const attachment of entry.attachments) {
      if (!attachment.done && !this.running.has(attachment.key)) this.run(entry, attachment);
    }
    this.finishIfDone(entry);
  }

  retry(clientId, key) {
    const entry = this.entry(clientId);
    const attachment = entry?.attachments?.find((a) => a.key === key);
    if (attachment && !this.running.has(key)) this.run(entry, attachment);
  }

  /** Takes one file out of a pending message (the upload is deleted); a message left empty goes. */
  async cancel(clientId, key) {
    const entry = this.entry(clientId);
    if (!entry) return;
    entry.attachments = entry.attachments.filter((a) => a.key !== key);
    if (!entry.attachments.length && !entry.text) this.store.remove(clientId);
    else { this.store.saveOutbox(); this.finishIfDone(entry); }
    this.store.changed();
  }

  /** A blob: URL of the photo `key` while its message is pending (this page only), or undefined. */
  previewOf(key) {
    const blob = this.records.get(key)?.blob;
    if (!this.previews.has(key) && blob?.type.startsWith("image/")) this.previews.set(key, URL.createObjectURL(blob));
    return this.previews.get(key);
  }

  /** The outbox changed: files whose message is gone (cancelled, deleted) stop and are deleted. */
  outboxChanged() {
    const pending = new Set(this.store.outbox.flatMap((entry) => entry.attachments?.map((a) => a.key) ?? []));
    for (const [key, url] of this.previews) if (!pending.has(key)) { URL.revokeObjectURL(url); this.previews.delete(key); }
    const wanted = new Set(this.pendingKeys());
    for (const [key, record] of this.records) {
      if (wanted.has(key) || this.arriving.has(key)) continue;
      this.running.get(key)?.abort();
      this.running.delete(key);
      this.state.delete(key);
      this.records.delete(key);
      deleteRecord(key);
      if (record.url) remove(this.token, record.url);
    }
  }

  entry(clientId) { return this.store.outbox.find((p) => p.clientId === clientId && p.attachments); }

  setState(key, state) {
    this.state.set(key, state);
    this.store.changed();
  }

  run(entry, attachment) {
    const { key } = attachment;
    const controller = new AbortController();
    this.running.set(key, controller);
    this.setState(key, { phase: "preparing" });
    const work = async () => {
      try {
        await this.upload(entry, attachment, controller.signal);
        if (controller.signal.aborted) return;
        attachment.done = true;
        this.state.delete(key);
        this.records.delete(key);
        this.store.saveOutbox();  // done before the record goes: a reload now sends, it does not upload again
        deleteRecord(key);
        this.finishIfDone(entry);
      } catch (error) {
        if (controller.signal.aborted) return;
        const text = this.errorText(error, attachment);
        this.setState(key, { phase: "failed", error: text });
        this.onFailure(text);
      } finally {
        if (this.running.get(key) === controller) this.running.delete(key);
        this.store.changed();
      }
    };
    if (navigator.locks) navigator.locks.request(`parley-upload-${key}`, { signal: controller.signal }, work).catch(() => {});
    else work();
  }

  async record(key) {
    if (!this.records.has(key)) {
      const stored = await readRecord(key).catch(() => null);
      if (stored) this.records.set(key, stored);
    }
    return this.records.get(key);
  }

  async upload(entry, attachment, signal) {
    const { key } = attachment;
    const record = await this.record(key);
    if (!record) throw new TusError(0, "gone", "The file is no longer on this device.");
    if (record.encode) {
      const blob = await reencode(record.blob);
      Object.assign(record, { blob, encode: false, name: blob.name ?? record.name, type: blob.type, size: blob.size });
      Object.assign(attachment, { name: record.name, size: record.size, mimeType: record.type });
      await saveRecord(record).catch(() => {});
      this.store.saveOutbox();
    }
    record.digest ??= await sha256(record.blob);
    // Rule 3: the outbox's id (written first) or else the record's URL; both say the same from here on.
    if (attachment.uploadId && uploadIdOf(record.url ?? "") !== attachment.uploadId) record.url = uploadUrl(attachment.uploadId);
    if (record.url) attachment.uploadId = uploadIdOf(record.url);
    let restarts = 0, failures = 0, offset = 0;
    this.refuseIfOut(entry);
    while (!signal.aborted) {
      try {
        if (!record.url) {
          const created = await create(this.token, { size: record.size, name: record.name, type: record.type, digest: record.digest,
                                                     original: record.original });
          record.url = created.url;
          attachment.uploadId = created.id;
          offset = created.offset;
          this.store.saveOutbox();  // at once: the record's write below (the whole file again) is slow
          await saveRecord(record).catch(() => {});
        } else {
          offset = await offsetOf(this.token, record.url, signal);
        }
        while (offset < record.size) {
          this.refuseIfOut(entry);
          this.setState(key, { phase: "uploading", sent: offset, total: record.size });
          offset = await append(this.token, record.url, offset, record.blob.slice(offset, offset + CHUNK), signal);
          failures = 0;
        }
        attachment.uploadId = uploadIdOf(record.url);  // the upload that holds the file is the one the message names
        return;
      } catch (error) {
        if (signal.aborted || !(error instanceof TusError)) throw error;
        if (error.status === 404 && record.url) {
          // Expired, or removed after a whole-file checksum mismatch: start again, a few times at most.
          if (++restarts > MAX_RESTARTS) throw error;
          record.url = undefined;
          attachment.uploadId = undefined;
        } else if (error.status === 409 || error.status === 460) {
          if (++failures > 5) throw error;  // HEAD says where to go on
        } else if (error.status === 0 || error.status === 429 || error.status >= 500) {
          if (error.status !== 0 && ++failures > 8) throw error;
          await this.pause(key, error, failures, signal);
        } else {
          throw error;
        }
      }
    }
  }

  /**
   * Rule 8: out of the group the message was written in (removed, or left elsewhere), the server
   * would refuse the message: its files stop now, not once every byte is up. What was sent stays
   * on the server, so Retry, once back in the group, goes on from there.
   */
  refuseIfOut(entry) {
    if (this.store.conversations.get(entry.conversationId)?.leftSeq) throw new TusError(403, "forbidden", "no longer a member");
  }

  /** Waits before trying again: as long as the server says, else backing off; back online goes at once. */
  pause(key, error, failures, signal) {
    const seconds = error.retryAfter ?? Math.min(30, 2 ** Math.min(failures, 5));
    const text = error.status === 429 ? `Too many uploads right now: going on in ${seconds} s.` : "Waiting for the connection…";
    this.setState(key, { ...this.state.get(key), phase: "waiting", error: text });
    return new Promise((resolve) => {
      const done = () => { clearTimeout(timer); window.removeEventListener("online", done); signal.removeEventListener("abort", done); resolve(); };
      const timer = setTimeout(done, seconds * 1000);
      window.addEventListener("online", done);
      signal.addEventListener("abort", done);
    });
  }

  finishIfDone(entry) {
    if (!entry.uploading || entry.attachments.some((a) => !a.done) || !this.store.outbox.includes(entry)) return;
    entry.uploading = false;
    if (!entry.attachments.length) delete entry.attachments;
    this.store.saveOutbox();
    this.store.changed();
    this.store.flush();
  }

  errorText(error, attachment) {
    const name = `“${attachment.name}”`;
    if (error?.code === "upload_too_large") return `${name} is too large to send.`;
    if (error?.code === "quota_exceeded") return `Your storage for files is full: ${name} was not sent.`;
    if (error?.code === "rate_limited") return "Too many uploads right now. Try again in a minute.";
    if (error?.code === "forbidden") return `${name} was not sent: you are no longer a member of this group.`;
    return `${name} could not be uploaded: ${error?.message ?? "something went wrong"}.`.replace(/\.\.$/, ".");
  }
}
