// The outbox's copy in IndexedDB (store.js outbox rule 6). The outbox itself stays in localStorage,
// read at once when the page starts so pending messages show immediately; but a browser crash can
// lose what localStorage had not yet written to disk, a minute of it. Each save also goes here.
import { database } from "./idb.js";

const copies = database("parley-outbox", "outboxes", "userId");

/** Keeps `json` (the outbox as localStorage has it) as `userId`'s; failures only lose the extra safety. */
export function saveOutboxCopy(userId, json) {
  copies.run("readwrite", (store) => store.put({ userId, json })).catch(() => {});
}

/** `userId`'s outbox as last saved here ([] when there is none or IndexedDB is unavailable). */
export async function readOutboxCopy(userId) {
  try {
    const record = await copies.run("readonly", (store) => store.get(userId));
    return record ? JSON.parse(record.json) : [];
  } catch {
    return [];
  }
}
