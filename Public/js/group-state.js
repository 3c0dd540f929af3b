// What groups add to the chat store: invitations, the names of people who are not (or no longer)
// members, the refetch a membership entry calls for, idempotent actions, and unread counts.
//
// Unread (in every conversation, direct ones too) is not lastSeq − readSeq: entries, my own
// messages, messages deleted for everyone and those I hid do not count. So the server's
// unreadCount / mentionCount are kept and moved: +1 for each new message of someone else
// (and for each that mentions me), recounted from the loaded thread when my read cursor moves, or
// read again from the server when the thread does not hold every message after the cursor.

import { lookAlikes, nameSkeleton } from "./format.js";

// Errors after which an action may or may not have happened: its clientId is kept for the retry.
const UNCERTAIN = new Set(["offline", "rate_limited", "unavailable", "storage_unavailable", "internal_error"]);
const NO_LOOK_ALIKES = { ids: new Set(), skeletons: new Set() };

export class GroupState {
  constructor(store) {
    this.store = store;
    this.invitations = new Map();   // conversationId → invitation
    this.liveInvitations = null;    // ids that came on the stream while the list was being read
    this.users = new Map();         // userId → User, for people not in a loaded member list
    this.fetchingUsers = new Set();
    this.refetchTimers = new Map();
    this.actionIds = new Map();     // action key → clientId, until the action is answered
    this.earlyAggregates = new Map(); // conversationId → receiptSummary that came before its summary
    this.lookAlikeSets = new WeakMap(); // a group's members array → {ids, skeletons}: whose names read alike (lookAlikesOf)
  }

  // MARK: actions

  /**
   * Runs a group action with a clientId that stays the same for `key` until the server answers it,
   * so trying again after a network error cannot act twice (the server answers the original).
   */
  async act(key, run) {
    if (!this.actionIds.has(key)) this.actionIds.set(key, crypto.randomUUID());
    try {
      const result = await run(this.actionIds.get(key));
      this.actionIds.delete(key);
      return result;
    } catch (error) {
      if (!UNCERTAIN.has(error.code) && error.status !== 0 && !(error.status >= 500)) this.actionIds.delete(key);
      throw error;
    }
  }

  // MARK: invitations

  async loadInvitations() {
    this.liveInvitations = new Set();
    try {
      const { invitations } = await this.store.api.invitations();
      // The list replaces what was known (declines leave no event), except invitations the stream
      // brought while it was being read: the list may be older than them.
      for (const id of [...this.invitations.keys()]) if (!this.liveInvitations.has(id)) this.invitations.delete(id);
      for (const invitation of invitations) this.applyInvitation(invitation);
      this.store.changed();
    } catch { /* offline or not supported: the next connection tries again */ }
    this.liveInvitations = null;
  }

  applyInvitation(invitation, { live = false } = {}) {
    if (!invitation?.conversationId) return;
    if (live) this.liveInvitations?.add(invitation.conversationId);
    this.remember(invitation.inviter);
    const known = this.store.conversations.get(invitation.conversationId);
    if (known && !known.leftSeq) return;  // already a member (accepted on another device)
    this.invitations.set(invitation.conversationId, invitation);
  }

  sortedInvitations() {
    return [...this.invitations.values()].sort((a, b) => b.createdAt - a.createdAt);
  }

  /** Accepts; the group is in the list when this returns. */
  async accept(id) {
    const result = await this.act(`accept:${id}`, (clientId) => this.store.api.acceptInvitation(id, clientId));
    this.invitations.delete(id);
    if (result?.conversation) this.store.addSummary(result.conversation);
    if (result?.entry) this.store.applyMessage(result.entry);
    this.store.changed();
    return id;
  }

  async decline(id) {
    try {
      await this.store.api.declineInvitation(id);
    } catch (error) {
      if (error.code !== "invitation_not_found") throw error;  // already gone: nothing to decline
    }
    this.invitations.delete(id);
    this.store.changed();
  }

  // MARK: people

  remember(user) {
    if (user?.id) this.users.set(user.id, user);
  }

  /**
   * A user's display name, from the group's members or the cache; fetched once when unknown. A
   * member whose name reads like another member's (format.js `lookAlikes`: "Аda" with a Cyrillic А
   * beside Ada) gets their @username, as both of them do: nobody passes for another by name.
   */
  nameOf(userId, summary) {
    const member = summary?.members.find((m) => m.userId === userId);
    if (member) return this.lookAlikesOf(summary).ids.has(userId) ? `${member.displayName} (@${member.username})` : member.displayName;
    const cached = this.users.get(userId);
    if (cached) return this.formerMemberName(cached, summary);
    for (const other of this.store.conversations.values()) {
      const found = other.members.find((m) => m.userId === userId);
      if (found) {
        this.remember({ id: found.userId, username: found.username, displayName: found.displayName });
        return this.formerMemberName(found, summary);
      }
    }
    this.fetchUser(userId);
    return null;
  }

  /**
   * The members of a group (me aside: I am "You") whose names read alike, and the skeletons of
   * their names: worked out once per member list (a refetch brings a new one; a profile change,
   * which edits members in place, forgets them all: profiles.js).
   */
  lookAlikesOf(summary) {
    if (!summary || !this.store.isGroup(summary)) return NO_LOOK_ALIKES;
    let known = this.lookAlikeSets.get(summary.members);
    if (!known) {
      const others = summary.members.filter((m) => m.userId !== this.store.me);
      known = { ids: lookAlikes(others), skeletons: new Set(others.map((m) => nameSkeleton(m.displayName))) };
      this.lookAlikeSets.set(summary.members, known);
    }
    return known;
  }

  /** Someone no longer (or never) a member of the group: by name, with their @username when it reads like a member's. */
  formerMemberName(user, summary) {
    if (!this.lookAlikesOf(summary).skeletons.has(nameSkeleton(user.displayName))) return user.displayName;
    return `${user.displayName} (${user.username ? `@${user.username}` : "former member"})`;
  }

  usernameOf(userId, summary) {
    const member = summary?.members.find((m) => m.userId === userId);
    if (member) return member.username;
    this.nameOf(userId, summary);  // fetches it when unknown
    return this.users.get(userId)?.username ?? null;
  }

  fetchUser(userId) {
    if (!userId || this.fetchingUsers.has(userId)) return;
    this.fetchingUsers.add(userId);  // once: a failure is not retried in a loop of renders
    this.store.api.user(userId).then((user) => { this.remember(user); this.store.changed(); }).catch(() => {});
  }

  // MARK: summaries

  /** Reads the group again (members, roles, title, counts); several entries in a row cost one read. */
  refetch(id) {
    clearTimeout(this.refetchTimers.get(id));
    this.refetchTimers.set(id, setTimeout(() => {
      this.refetchTimers.delete(id);
      this.store.api.conversation(id).then((summary) => { this.store.addSummary(summary); this.store.changed(); }).catch(() => {});
    }, 100));
  }

  /** What a membership entry changes at once, before the refetch brings the whole group. */
  applyEntry(message, summary) {
    const { entry } = message;
    const me = this.store.me;
    if (!summary) return;
    const concernsMe = entry.userIds?.includes(me);
    if ((entry.type === "removed" && concernsMe) || (entry.type === "left" && message.senderId === me)) {
      summary.leftSeq = Math.max(summary.leftSeq ?? 0, message.seq);
      this.store.typing.delete(summary.id);
      this.store.unsendableAgain(summary.id);  // "in this group again" no longer holds
    } else if (summary.leftSeq && message.seq > summary.leftSeq) {
      delete summary.leftSeq;  // re-added or joined again: a new span
    }
    if ((entry.type === "added" && concernsMe) || (entry.type === "joined" && message.senderId === me)) {
      this.store.reloadThread(summary.id);  // the new span may show what was hidden (shared history)
      // In the same change as leftSeq's removal above, so the failed send's words and its Retry
      // button say the same (the `conversation` event before this entry changed neither).
      this.store.sendableAgain(summary.id);
    }
    if (entry.title && (entry.type === "renamed" || entry.type === "created")) summary.title = entry.title;
    if (entry.type === "left" && message.senderId !== me) {
      summary.members = summary.members.filter((m) => m.userId !== message.senderId);
    }
    if (entry.type === "removed") summary.members = summary.members.filter((m) => !entry.userIds?.includes(m.userId));
    this.refetch(summary.id);
  }

  applyAggregate(aggregate) {
    const summary = this.store.conversations.get(aggregate.conversationId);
    if (!summary) {
      this.earlyAggregates.set(aggregate.conversationId, maxAggregate(this.earlyAggregates.get(aggregate.conversationId), aggregate));
      return;
    }
    Object.assign(summary, maxAggregate(summary, aggregate));
  }

  /** Merges what was known of a group into a summary read from the server (which may be older). */
  merge(summary, known) {
    Object.assign(summary, maxAggregate(maxAggregate(summary, known), this.earlyAggregates.get(summary.id)));
    this.earlyAggregates.delete(summary.id);
    this.mergeUnread(summary, known);
    if (known && known.lastSeq > summary.lastSeq) {
      if (known.title) summary.title = known.title;
      if (known.leftSeq && !summary.leftSeq) summary.leftSeq = known.leftSeq;
    }
    for (const member of summary.members) {
      this.users.set(member.userId, { id: member.userId, username: member.username, displayName: member.displayName, photo: member.photo });
    }
    if (!summary.leftSeq) this.invitations.delete(summary.id);
  }

  /** The unread part of a merge, for any conversation. */
  mergeUnread(summary, known) {
    // My read cursor may be ahead of the server's read (a receipt on its way): count from mine.
    const myKnown = known && this.store.me_(known), myRead = this.store.me_(summary);
    if (myKnown && myRead && myKnown.readSeq > myRead.readSeq) {
      myRead.readSeq = myKnown.readSeq;
      myRead.deliveredSeq = Math.max(myRead.deliveredSeq, myKnown.deliveredSeq);
      this.recount(summary, { fetch: false });
    }
    if (known && known.lastSeq > summary.lastSeq) {
      // The stream is ahead of this read: what it told is newer.
      summary.unreadCount = known.unreadCount;
      summary.mentionCount = known.mentionCount;
    }
  }

  /** A new message arrived: it counts as unread when it is someone else's words. */
  countIncoming(summary, message) {
    if (message.entry || message.deletedAt || message.senderId === this.store.me) return;
    const mine = this.store.me_(summary);
    if (mine && mine.readSeq >= message.seq) return;
    summary.unreadCount = (summary.unreadCount ?? 0) + 1;
    if (message.mentions?.includes(this.store.me)) summary.mentionCount = (summary.mentionCount ?? 0) + 1;
  }

  /**
   * My read cursor moved: count again what is after it. Without every message after the cursor in
   * the thread, the server counts (a refetch), unless `fetch` is false: then its count stands.
   */
  recount(summary, { fetch = true } = {}) {
    const mine = this.store.me_(summary);
    if (!mine) return;
    if (mine.readSeq >= summary.lastSeq) {
      summary.unreadCount = 0;
      summary.mentionCount = 0;
      return;
    }
    const thread = this.store.threads.get(summary.id);
    let unread = 0, mentions = 0;
    for (let seq = mine.readSeq + 1; seq <= summary.lastSeq; seq++) {
      const message = thread?.messages.get(seq);
      // Not all loaded (or hidden by me): the server counts.
      if (!message) { if (fetch) this.refetch(summary.id); return; }
      if (message.entry || message.deletedAt || message.senderId === this.store.me) continue;
      unread++;
      if (message.mentions?.includes(this.store.me)) mentions++;
    }
    summary.unreadCount = unread;
    summary.mentionCount = mentions;
  }
}

/** The furthest of two receipt aggregates (they only move forward). */
function maxAggregate(a, b) {
  const delivered = Math.max(a?.everyoneDeliveredSeq ?? 0, b?.everyoneDeliveredSeq ?? 0);
  const read = Math.max(a?.everyoneReadSeq ?? 0, b?.everyoneReadSeq ?? 0);
  return { everyoneDeliveredSeq: Math.max(delivered, read), everyoneReadSeq: read };
}
