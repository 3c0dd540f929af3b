// The conversation list (people and groups), pending group invitations on top, and the "new chat" search.
import { $, avatar, el, errorText, reconcile } from "./dom.js";
import { entryLines } from "./entries.js";
import { inviterName, isolate, messagePreview, smartTime } from "./format.js";
import { DELETED_TEXT } from "./message-actions.js";
import { quietIcon } from "./notifications.js";

const QUIET_LABELS = { muted: "muted", off: "notifications off" };

export class ListView {
  constructor(store, { onOpen, onStartChat, onNewGroup }) {
    this.store = store;
    this.onOpen = onOpen;
    this.onStartChat = onStartChat;
    this.openId = null;
    $("new-chat").addEventListener("click", () => this.toggleSearch());
    $("new-group").addEventListener("click", () => onNewGroup());
    $("empty-start-chat").addEventListener("click", () => this.toggleSearch(true));
    $("filter-input").addEventListener("input", () => this.render());
    $("list-error").querySelector("button").addEventListener("click", () => store.loadConversations());
    let debounce;
    $("search-input").addEventListener("input", (event) => {
      clearTimeout(debounce);
      debounce = setTimeout(() => this.search(event.target.value.trim()), 200);
    });
    $("search-input").addEventListener("keydown", (event) => { if (event.key === "Escape") this.toggleSearch(false); });
  }

  toggleSearch(show = $("search-box").hidden) {
    $("search-box").hidden = !show;
    if (show) $("search-input").focus();
    else { $("search-input").value = ""; $("search-results").replaceChildren(); }
  }

  async search(query) {
    const results = $("search-results");
    if (!query) { results.replaceChildren(); return; }
    // The server refuses shorter searches (so nobody can list the directory letter by letter).
    if ([...query].length < 3) { results.replaceChildren(el("li", "muted center", "Type at least 3 characters")); return; }
    try {
      const { users } = await this.store.api.searchUsers(query);
      results.replaceChildren(...users.map((user) => {
        const button = el("button", null);
        button.type = "button";
        button.append(avatar(user.displayName, user.id, false, user.photo));
        const main = el("span", "row-main");
        main.append(el("span", "row-name", user.displayName), el("span", "row-preview", ` @${user.username}`));
        button.append(main);
        button.addEventListener("click", () => { this.toggleSearch(false); this.onStartChat(user); });
        const item = el("li");
        item.append(button);
        return item;
      }));
      if (!users.length) results.replaceChildren(el("li", "muted center", "Nobody found"));
    } catch (error) {
      results.replaceChildren(el("li", "error center", error.message));
    }
  }

  render() {
    const store = this.store;
    const all = store.sortedConversations();
    // The filter matches the other person's name or the last message, as typed (case-insensitive).
    const filter = $("filter-input").value.trim().toLocaleLowerCase();
    const conversations = filter ? all.filter((summary) => {
      const other = store.isGroup(summary) ? null : store.other(summary);
      return [summary.title, other?.displayName, other?.username, summary.lastMessage && messagePreview(summary.lastMessage)]
        .some((text) => text?.toLocaleLowerCase().includes(filter));
    }) : all;
    this.renderInvitations();
    $("filter-empty").hidden = !(filter && all.length > 0 && conversations.length === 0);
    $("list-loading").hidden = !(store.listState === "loading" && conversations.length === 0);
    $("list-empty").hidden = !(store.listState === "ready" && all.length === 0);
    $("list-error").hidden = store.listState !== "error";
    $("list-error").querySelector("span").textContent = store.listError ?? "";
    const items = conversations.map((summary) => ({ key: summary.id, summary }));
    // Counted once for the whole list, not once per row.
    this.notSentCounts = new Map();
    for (const entry of store.outbox) {
      if (!entry.action && entry.status === "failed") this.notSentCounts.set(entry.conversationId, (this.notSentCounts.get(entry.conversationId) ?? 0) + 1);
    }
    reconcile($("conversation-list"), items, (item) => this.createRow(item), (node, item) => this.updateRow(node, item));
  }

  createRow(item) {
    const li = el("li");
    const button = el("button");
    button.type = "button";
    button.addEventListener("click", () => this.onOpen(li.dataset.key));
    li.append(button);
    this.updateRow(li, item);
    return li;
  }

  /** Invitations to groups: "Ada invited you to “Trip”", with Accept and Decline. */
  renderInvitations() {
    const invitations = this.store.groups.sortedInvitations();
    $("invitations").hidden = invitations.length === 0;
    const items = invitations.map((invitation) => ({ key: invitation.conversationId, invitation }));
    reconcile($("invitation-list"), items, (item) => this.invitationRow(item), () => {});
  }

  invitationRow({ invitation }) {
    const li = el("li", "invitation");
    const id = invitation.conversationId;
    // A stranger may take anyone's name: the username says who invites.
    const text = el("p", "invitation-text", `${inviterName(invitation.inviter)} invited you to “${isolate(invitation.title)}”`);
    text.id = `invitation-${id}`;
    const count = el("p", "muted invitation-count", invitation.memberCount === 1 ? "1 member" : `${invitation.memberCount} members`);
    const error = el("p", "error invitation-error");
    error.setAttribute("role", "alert");
    error.hidden = true;
    const accept = el("button", "primary small", "Accept");
    const decline = el("button", "small", "Decline");
    for (const button of [accept, decline]) {
      button.type = "button";
      button.setAttribute("aria-describedby", text.id);
    }
    const act = async (button, run) => {
      accept.disabled = decline.disabled = true;
      error.hidden = true;
      try {
        await run();
      } catch (failure) {
        error.textContent = errorText(failure);
        error.hidden = false;
        accept.disabled = decline.disabled = false;
        button.focus();
      }
    };
    accept.addEventListener("click", () => act(accept, async () => this.onOpen(await this.store.groups.accept(id))));
    decline.addEventListener("click", () => act(decline, () => this.store.groups.decline(id).then(() => $("filter-input").focus())));
    const actions = el("div", "invitation-actions");
    actions.append(accept, decline);
    li.append(avatar(invitation.title, id, false), text, count, actions, error);
    return li;
  }

  /** The preview line: "You: …", "Ada: …" in groups, a membership entry as its line. */
  preview(summary) {
    const store = this.store;
    const last = summary.lastMessage;
    if (!last) return "No messages yet";
    if (last.entry) return entryLines(last, (id) => store.nameOf(id, summary), store.me)[0];
    const text = last.deletedAt ? DELETED_TEXT : messagePreview(last);
    if (last.senderId === store.me) return `You: ${text}`;
    if (store.isGroup(summary)) return `${isolate(store.nameOf(last.senderId, summary) ?? "…")}: ${text}`;
    return text;
  }

  updateRow(li, { summary }) {
    if (this.store.isGroup(summary)) { this.updateGroupRow(li, summary); return; }
    const store = this.store;
    const other = store.other(summary) ?? { displayName: "?", userId: "" };
    const online = store.presenceOf(other.userId)?.online;
    const unread = store.unread(summary);
    const preview = this.preview(summary);
    const quiet = store.notifications.quiet(summary.id);
    const photo = store.photoOf(other);
    const name = store.directName(other);
    const failed = this.notSent(summary);
    const signature = [name, online, unread, preview, summary.lastActivityAt, this.openId === summary.id, quiet, photo, failed].join("|");
    if (li.dataset.signature === signature) return;
    li.dataset.signature = signature;
    const button = li.firstElementChild;
    button.setAttribute("aria-current", String(this.openId === summary.id));
    button.setAttribute("aria-label", `${name}${online ? ", online" : ""}${unread ? `, ${unread} unread` : ""}${notSentLabel(failed)}${quietLabel(quiet)}`);
    const top = el("span", "row-top");
    top.append(el("span", "row-name", name), ...quietMark(quiet), el("span", "row-time", smartTime(summary.lastActivityAt)));
    const bottom = el("span", "row-bottom");
    bottom.append(el("span", "row-preview", firstLine(preview)), ...notSentMark(failed));
    if (unread > 0) bottom.append(el("span", "badge", String(unread)));
    const main = el("span", "row-main");
    main.append(top, bottom);
    button.replaceChildren(avatar(other.displayName, other.userId, online, photo), main);
  }

  /** My messages of `summary` the server refused, waiting for a retry or a delete (they may have failed while the page was closed). */
  notSent(summary) {
    return this.notSentCounts?.get(summary.id) ?? 0;
  }

  /** A group: its title and an avatar of it, no online dot; unread count and "@" when I am mentioned. */
  updateGroupRow(li, summary) {
    const unread = this.store.unread(summary);
    const mentioned = (summary.mentionCount ?? 0) > 0;
    const title = this.store.titleOf(summary);
    const preview = this.preview(summary);
    const quiet = this.store.notifications.quiet(summary.id);
    const failed = this.notSent(summary);
    const signature = [title, preview, unread, mentioned, summary.lastActivityAt, summary.leftSeq, this.openId === summary.id, quiet, failed].join("|");
    if (li.dataset.signature === signature) return;
    li.dataset.signature = signature;
    const button = li.firstElementChild;
    button.setAttribute("aria-current", String(this.openId === summary.id));
    button.setAttribute("aria-label", `${title}, group${unread ? `, ${unread} unread` : ""}${mentioned ? ", you were mentioned" : ""}${notSentLabel(failed)}${quietLabel(quiet)}`);
    const top = el("span", "row-top");
    top.append(el("span", "row-name", title), ...quietMark(quiet), el("span", "row-time", smartTime(summary.lastActivityAt)));
    const bottom = el("span", "row-bottom");
    bottom.append(el("span", "row-preview", firstLine(preview)), ...notSentMark(failed));
    if (mentioned) bottom.append(el("span", "badge mention-badge", "@"));
    if (unread > 0) bottom.append(el("span", "badge", String(unread)));
    const main = el("span", "row-main");
    main.append(top, bottom);
    button.replaceChildren(avatar(title, summary.id, false), main);
  }
}

/** A preview's first line (a line or paragraph separator ends it too). */
function firstLine(text) { return text.split(/[\n\u2028\u2029]/)[0]; }

/** ", 1 message not sent" for a row's label. */
function notSentLabel(count) { return count ? `, ${count} ${count === 1 ? "message" : "messages"} not sent` : ""; }

/** A red "!" on a row with messages not sent, as a failed message shows it (its label says so in words). */
function notSentMark(count) {
  if (!count) return [];
  const mark = el("span", "badge not-sent", "!");
  mark.title = `${count} not sent`;
  mark.setAttribute("aria-hidden", "true");
  return [mark];
}

/** ", muted" for a row's name: the row's label names it, since a label replaces what is inside. */
function quietLabel(quiet) { return quiet ? `, ${QUIET_LABELS[quiet]}` : ""; }

/** The crossed-out bell after the name of a muted conversation (or one that notifies about nothing). */
function quietMark(quiet) { return quiet ? [quietIcon(quiet === "muted" ? "Muted" : "Notifications off")] : []; }
