// Membership entries (messages with `entry`, text empty) as the lines people read: "Ada added
// Grace", "You left", "Alan is now the owner". The same words serve the chat, the list preview
// and screen reader announcements.
import { isolate, joinNames } from "./format.js";

/**
 * The lines one entry shows. `name(userId)` gives a display name (or null while it is fetched);
 * I am "You" as the one acting and "you" as the one acted on.
 */
export function entryLines(message, name, me) {
  const entry = message.entry ?? {};
  const who = (id) => isolate(name(id) ?? "Someone");
  const actor = message.senderId === me ? "You" : who(message.senderId);
  const them = joinNames((entry.userIds ?? []).map((id) => (id === me ? "you" : who(id))));
  switch (entry.type) {
    case "created": {
      const lines = [`${actor} created the group “${isolate(entry.title ?? "")}”`];
      if (entry.userIds?.length) lines.push(`${actor} added ${them}`);
      return lines;
    }
    case "added": return [`${actor} added ${them}`];
    case "joined": return [`${actor} joined`];
    case "removed": return [`${actor} removed ${them}`];
    case "left": {
      const lines = [`${actor} left`];
      // The owner left: the entry names who became owner.
      const heir = entry.role === "owner" ? entry.userIds?.[0] : null;
      if (heir) lines.push(heir === me ? "You are now the owner" : `${who(heir)} is now the owner`);
      return lines;
    }
    case "role":
      return [entry.role === "admin" ? `${actor} made ${them} an admin` : `${actor} dismissed ${them} as admin`];
    case "renamed": return [`${actor} renamed the group to “${isolate(entry.title ?? "")}”`];
    default: return [`${actor} changed the group`];  // a kind of entry newer than this page
  }
}

/** Whether an entry ended my membership, and how: "removed", "left" or null. */
export function departure(message, me) {
  const entry = message?.entry;
  if (entry?.type === "removed" && entry.userIds?.includes(me)) return "removed";
  if (entry?.type === "left" && message.senderId === me) return "left";
  return null;
}
