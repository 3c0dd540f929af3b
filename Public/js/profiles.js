// Profile changes told live (docs/protocol.md, the `profile` frame): someone who shares a
// conversation with me, or I on another device, set or removed a profile photo. The frame carries
// the user as now (`photo` absent once removed), and every copy of that person the page keeps takes
// it: the members of every conversation summary, the people cache (groups.users), the inviters of
// pending invitations and, when it is me, the session's user; then `store.onProfile` hears of it
// (app.js: the saved session, the account menu, a chat opened with someone before its first
// message). The views re-render from the store (store.photoOf). The frame is ephemeral: a page that
// was closed or offline then sees the photo in what it loads next.

/** Applies `user` to every copy of them `store` keeps. */
export function applyProfile(store, user) {
  if (!user?.id) return;
  for (const summary of store.conversations.values()) {
    for (const member of summary.members ?? []) {
      if (member.userId === user.id) takeProfile(member, user);
    }
  }
  store.groups.lookAlikeSets = new WeakMap();  // names may have changed in place
  const cached = store.groups.users.get(user.id);
  if (cached) store.groups.users.set(user.id, takeProfile({ ...cached }, user));
  for (const invitation of store.groups.invitations.values()) {
    if (invitation.inviter?.id === user.id) invitation.inviter = takeProfile({ ...invitation.inviter }, user);
  }
  if (user.id === store.me) store.session.user = user;
  store.onProfile(user);
}

/** `person` (a member or a user) with `user`'s names and photo; no `photo` at all once it is removed. */
function takeProfile(person, user) {
  if (typeof user.displayName === "string") person.displayName = user.displayName;
  if (typeof user.username === "string") person.username = user.username;
  if (user.photo) person.photo = user.photo;
  else delete person.photo;
  return person;
}
