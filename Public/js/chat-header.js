// The chat's header and composer area: who or what the chat is (a person with presence, or a group
// with its member count and who is typing), and, once I am out of a group, a notice in place of
// the composer.
import { $, avatar, el } from "./dom.js";
import { departure } from "./entries.js";
import { isolate, presenceText, typingText } from "./format.js";
import { memberCount } from "./group-panel.js";

/** Title, avatar and status line: the other person (presence) or the group (members, typing). */
export function renderHeader(view, summary) {
  const store = view.store;
  const group = view.isGroup;
  const other = group ? null : (summary && store.other(summary)) ?? view.other;
  const name = group ? (summary?.title ?? "") : (store.directName(other) ?? "");
  const avatarId = group ? view.id : (other?.userId ?? "");
  if (group) {
    // The title is a button: it opens the member panel (click or Enter).
    let button = $("chat-name").querySelector("button");
    if (!button) {
      button = el("button", "title-button");
      button.type = "button";
      button.setAttribute("aria-haspopup", "dialog");
      button.addEventListener("click", () => view.onGroupInfo(view.id));
      $("chat-name").replaceChildren(button);
    }
    button.textContent = name;
    button.setAttribute("aria-label", `${name}, group info`);
  } else {
    $("chat-name").textContent = name;
  }
  const photo = group ? null : store.photoOf(other);
  const avatarKey = `${avatarId}|${name}|${photo ?? ""}`;
  if ($("chat-avatar").dataset.key !== avatarKey) {  // rebuilt only when the person, title or photo changes, not every render
    const fresh = Object.assign(avatar(group ? name : (other?.displayName ?? ""), avatarId, false, photo), { id: "chat-avatar" });
    fresh.dataset.key = avatarKey;
    $("chat-avatar").replaceWith(fresh);
  }
  const typing = store.typingIn(view.id);
  let status;
  if (group) {
    const names = typing.map((userId) => isolate(store.nameOf(userId, summary) ?? "Someone"));
    status = typingText(names) || (summary && !summary.leftSeq ? memberCount(summary.members.length) : "");
  } else {
    status = typing.length ? "typing…" : presenceText(store.presenceOf(other?.userId));
  }
  if ($("chat-status").textContent !== status) $("chat-status").textContent = status;
}

/** Out of the group (removed or left), the composer gives way to a notice; the history stays. */
export function renderComposer(view, summary) {
  const leftSeq = summary?.leftSeq;
  const how = leftSeq ? departure(view.store.thread(view.id).messages.get(leftSeq), view.store.me) : null;
  const notice = how === "removed" ? "You were removed from this group." : how === "left" ? "You left this group." : "You are no longer a member of this group.";
  $("left-notice").hidden = !leftSeq;
  if (leftSeq && $("left-notice").textContent !== notice) $("left-notice").textContent = notice;
  if (Boolean(leftSeq) !== $("composer").hidden) {
    const hadFocus = $("composer").contains(document.activeElement);
    $("composer").hidden = Boolean(leftSeq);
    if (leftSeq) {
      view.mentions.close();
      view.stopTyping();
      if (hadFocus) $("messages").focus();
    }
  }
}
