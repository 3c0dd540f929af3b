// The conversation list and the "new chat" search.
import { $, avatar, el, reconcile } from "./dom.js";
import { smartTime } from "./format.js";

export class ListView {
  constructor(store, { onOpen, onStartChat }) {
    this.store = store;
    this.onOpen = onOpen;
    this.onStartChat = onStartChat;
    this.openId = null;
    $("new-chat").addEventListener("click", () => this.toggleSearch());
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
        button.append(avatar(user.displayName, user.id, false));
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
      const other = store.other(summary);
      return [other?.displayName, other?.username, summary.lastMessage?.text].some((text) => text?.toLocaleLowerCase().includes(filter));
    }) : all;
    $("filter-empty").hidden = !(filter && all.length > 0 && conversations.length === 0);
    $("list-loading").hidden = !(store.listState === "loading" && conversations.length === 0);
    $("list-empty").hidden = !(store.listState === "ready" && all.length === 0);
    $("list-error").hidden = store.listState !== "error";
    $("list-error").querySelector("span").textContent = store.listError ?? "";
    const items = conversations.map((summary) => ({ key: summary.id, summary }));
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

  updateRow(li, { summary }) {
    const store = this.store;
    const other = store.other(summary) ?? { displayName: "?", userId: "" };
    const online = store.presenceOf(other.userId)?.online;
    const unread = store.unread(summary);
    const last = summary.lastMessage;
    const preview = last ? (last.senderId === store.me ? `You: ${last.text}` : last.text) : "No messages yet";
    const signature = [other.displayName, online, unread, last?.id, summary.lastActivityAt, this.openId === summary.id].join("|");
    if (li.dataset.signature === signature) return;
    li.dataset.signature = signature;
    const button = li.firstElementChild;
    button.setAttribute("aria-current", String(this.openId === summary.id));
    button.setAttribute("aria-label", `${other.displayName}${online ? ", online" : ""}${unread ? `, ${unread} unread` : ""}`);
    const top = el("span", "row-top");
    top.append(el("span", "row-name", other.displayName), el("span", "row-time", smartTime(summary.lastActivityAt)));
    const bottom = el("span", "row-bottom");
    bottom.append(el("span", "row-preview", preview.split("\n")[0]));
    if (unread > 0) bottom.append(el("span", "badge", String(unread)));
    const main = el("span", "row-main");
    main.append(top, bottom);
    button.replaceChildren(avatar(other.displayName, other.userId, online), main);
  }
}
