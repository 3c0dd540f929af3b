// Two tabs of one person share one saved outbox (store.js outbox rule 8). Each tab merges what the
// other saved into its own list instead of overwriting it:
// 1. An entry either tab removed (confirmed, cancelled, dropped) is listed as gone and stays gone
//    everywhere: a cancelled message never comes back to be sent by the other tab.
// 2. An entry both hold: the version changed more often (`rev`, counted at each save) wins, ties going
//    to the same version in every tab; `sent` is kept once either has it (the server may hold it),
//    and then the sent version's text wins: it is what the server may hold, and a resend of the same
//    clientId never carries other text.
// 3. The merged list is in the order written (createdAt; mine first among equals).

const GONE_KEPT = 500;  // how many removed clientIds are remembered

/** `mine` with `stored` merged in (rule 2 applied to my entries in place, which other modules hold). */
export function mergeOutboxes(mine, stored, gone) {
  const own = new Map(mine.map((entry) => [entry.clientId, entry]));
  const merged = mine.filter((entry) => !gone.has(entry.clientId));
  for (const theirs of stored) {
    if (!theirs?.clientId || gone.has(theirs.clientId)) continue;
    const entry = own.get(theirs.clientId);
    if (entry) mergeEntry(entry, theirs);
    else merged.push(theirs);
  }
  return merged.sort((a, b) => (a.createdAt ?? 0) - (b.createdAt ?? 0));
}

/** Rule 2, into `entry`. */
function mergeEntry(entry, theirs) {
  const sentText = sentVersion(entry, theirs)?.text;
  const sent = Boolean(entry.sent || theirs.sent);
  if (wins(theirs, entry)) {
    for (const key of Object.keys(entry)) if (!(key in theirs)) delete entry[key];
    Object.assign(entry, theirs);
  }
  if (sent && !entry.action) entry.sent = true;
  if (sentText !== undefined && !entry.action) entry.text = sentText;
}

function wins(a, b) {
  if ((a.rev ?? 0) !== (b.rev ?? 0)) return (a.rev ?? 0) > (b.rev ?? 0);
  return JSON.stringify(a) > JSON.stringify(b);
}

/** The one version that was put on the wire when the other was not, if so. */
function sentVersion(a, b) {
  if (a.sent && !b.sent) return a;
  if (b.sent && !a.sent) return b;
  return null;
}

/** The removed clientIds kept, newest last, at most GONE_KEPT. */
export function keptGone(gone) {
  return [...gone].slice(-GONE_KEPT);
}

/** An entry as compared between saves (without its own `rev`). */
export function revisionOf(entry) {
  const { rev, ...rest } = entry;
  return JSON.stringify(rest);
}
