// Files waiting to be uploaded, kept in IndexedDB (which stores Blobs) so an upload interrupted by a
// reload or a closed tab goes on when the page comes back. One record per file:
// { key, userId, clientId (its message's), conversationId, caption, name, size, type, blob,
//   encode (still to be re-encoded), digest?, url? (the tus upload, once created),
//   message: { conversationId, recipientId, text, replyToSeq, createdAt, attachments } }.
// The message itself waits in the outbox (localStorage) with the same clientId; `message` brings it
// back when a crash kept this record but not the outbox (uploads.js rule 7).

import { database } from "./idb.js";

const files = database("parley-uploads", "files", "key");

export const saveRecord = (record) => files.run("readwrite", (store) => store.put(record));
export const readRecord = (key) => files.run("readonly", (store) => store.get(key));
export const deleteRecord = (key) => files.run("readwrite", (store) => store.delete(key)).catch(() => {});
export const allRecords = () => files.run("readonly", (store) => store.getAll());
