// A single-store IndexedDB database, for what must survive a crash: IndexedDB writes when a
// transaction completes, where localStorage is written to disk when the browser gets round to it.

/** `name`'s store `store` (records keyed by `keyPath`): `run(mode, work)` does one transaction. */
export function database(name, store, keyPath) {
  let opening = null;
  const open = () => {
    opening ??= new Promise((resolve, reject) => {
      const request = indexedDB.open(name, 1);
      request.onupgradeneeded = () => request.result.createObjectStore(store, { keyPath });
      request.onsuccess = () => resolve(request.result);
      request.onerror = () => { opening = null; reject(request.error); };
    });
    return opening;
  };
  return {
    async run(mode, work) {
      const db = await open();
      return new Promise((resolve, reject) => {
        const transaction = db.transaction(store, mode);
        const request = work(transaction.objectStore(store));
        transaction.oncomplete = () => resolve(request?.result);
        transaction.onerror = transaction.onabort = () => reject(transaction.error);
      });
    },
  };
}
