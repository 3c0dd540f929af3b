// Files waiting to be uploaded, kept in IndexedDB (which stores Blobs) so an upload interrupted by a
// reload or a closed tab goes on when the page comes back. One record per file:
// { key, userId, clientId (its message's), conversationId, caption, name, size, type, blob,
//   encode (still to be re-encoded), digest?, url? (the tus upload, once created),
//   message: { conversationId, recipientId, text, replyToSeq, createdAt, attachments } }.
// The message itself waits in the outbox (localStorage) with the same clientId; `message` brings it
// back when a crash kept this record but not the outbox (uploads.js rule 7).

const NAME = "parley-uploads";
const STORE = "files";
let opening = null;

function open() {
  opening ??= new Promise((resolve, reject) => {
    const request = indexedDB.open(NAME, 1);
    request.onupgradeneeded = () => request.result.createObjectStore(STORE, { keyPath: "key" });
    request.onsuccess = () => resolve(request.result);
    request.onerror = () => { opening = null; reject(request.error); };
  });
  return opening;
}

async function run(mode, work) {
  const db = await open();
  return new Promise((resolve, reject) => {
    const transaction = db.transaction(STORE, mode);
    const request = work(transaction.objectStore(STORE));
    transaction.oncomplete = () => resolve(request?.result);
    transaction.onerror = transaction.onabort = () => reject(transaction.error);
  });
}

export const saveRecord = (record) => run("readwrite", (files) => files.put(record));
export const readRecord = (key) => run("readonly", (files) => files.get(key));
export const deleteRecord = (key) => run("readwrite", (files) => files.delete(key)).catch(() => {});
export const allRecords = () => run("readonly", (files) => files.getAll());
