// The parts a message row shows besides its text (chat-view.js builds the row): the quote of the
// message it answers, "edited", and reaction chips. Each is rebuilt only when what it shows changed.
import { el, reconcile, showName } from "./dom.js";
import { joinNames, shownText } from "./format.js";

/**
 * The quote above a reply's text: a button (Enter or a click goes to the original) naming who wrote
 * the original and its first line, or "Deleted message" ("Earlier message" for one from outside my
 * membership of the group). `quote` is { seq, name, preview, deleted, hidden } or null.
 */
export function renderQuote(li, bubble, quote) {
  const key = quote ? [quote.seq, quote.name, quote.deleted, quote.hidden, quote.preview].join("|") : "";
  if (li.dataset.quote === key) return;
  li.dataset.quote = key;
  bubble.querySelector(".quote")?.remove();
  if (!quote) return;
  const button = el("button", quote.deleted || quote.hidden ? "quote deleted" : "quote");
  button.type = "button";
  button.tabIndex = rowControlIndex(li);
  button.dataset.seq = quote.seq;
  button.title = "Show the original message";
  if (quote.hidden) {  // from before I was in the group: nothing to go to
    button.dataset.hidden = "1";
    button.setAttribute("aria-disabled", "true");
    button.title = "Sent before you were in this group";
  }
  // A message from outside my membership of the group: who wrote it, nothing of what it says.
  const text = el("span", "quote-text", quote.deleted ? "Deleted message" : quote.hidden ? "Earlier message" : shownText(quote.preview));
  text.dir = "auto";
  button.append(el("span", "visually-hidden", "In reply to "), showName(el("span", "quote-name"), quote.name), el("span", "visually-hidden", ": "), text);
  bubble.insertBefore(button, bubble.querySelector(":scope > .attachments, :scope > .text"));  // above a message's files
}

/** "edited" before the time, while the message has been edited (and is not deleted). */
export function renderEdited(meta, edited) {
  const label = meta.querySelector(".edited");
  if (edited && !label) meta.querySelector("time").before(el("span", "edited", "edited"));
  else if (!edited && label) label.remove();
}

/** Distinct reactions a row shows before the rest fold into a "+N" chip (a big group's flood of them). */
export const SHOWN_REACTIONS = 8;

/**
 * Reaction chips under the bubble: "👍 2", pressed when one is mine (a click sets mine or takes it
 * back). `names(userIds)` gives who reacted, for the tooltip. Past SHOWN_REACTIONS distinct ones, the
 * first few show and a "+N" chip (`.reactions-more`) shows the rest once pressed (`expanded`).
 */
export function renderReactions(li, all, names, expanded = false) {
  const folded = !expanded && all.length > SHOWN_REACTIONS ? all.length - (SHOWN_REACTIONS - 1) : 0;
  const reactions = folded ? all.slice(0, SHOWN_REACTIONS - 1) : all;
  const key = reactions.map((r) => `${r.emoji}:${r.count}:${r.mine ? 1 : 0}:${(r.userIds ?? []).join(",")}`).join(" ") + `|${folded}`;
  if (li.dataset.reactions === key) return;
  li.dataset.reactions = key;
  let list = li.querySelector(":scope > .reactions");
  // A chip taken away while it had focus gives focus to its message, not to the page.
  const hadFocus = Boolean(list?.contains(document.activeElement));
  const keepFocus = () => { if (hadFocus && !list.contains(document.activeElement)) li.focus({ preventScroll: true }); };
  if (!reactions.length) {
    list?.remove();
    if (list) keepFocus();
    return;
  }
  if (!list) {
    list = el("ul", "reactions");
    list.setAttribute("aria-label", "Reactions");
    li.querySelector(".bubble").after(list);
  }
  const items = reactions.map((reaction) => ({ key: reaction.emoji, reaction }));
  if (folded) items.push({ key: "+more", more: folded });
  // Chips are updated in place, so one keeps keyboard focus while its count changes.
  reconcile(list, items, (item) => {
    const chip = el("li");
    if (item.more) {
      const button = el("button", "reactions-more");
      button.type = "button";
      button.tabIndex = rowControlIndex(li);
      chip.append(button);
      updateMore(chip, item);
      return chip;
    }
    const button = el("button", "reaction");
    button.type = "button";
    button.tabIndex = rowControlIndex(li);
    button.dataset.emoji = item.reaction.emoji;
    button.append(el("span", "reaction-emoji", item.reaction.emoji), el("span", "reaction-count"));
    chip.append(button);
    updateChip(chip, item, names);
    return chip;
  }, (chip, item) => (item.more ? updateMore(chip, item) : updateChip(chip, item, names)));
  keepFocus();
}

function updateMore(chip, { more }) {
  const button = chip.firstElementChild;
  button.textContent = `+${more}`;
  button.setAttribute("aria-label", `${more} more reactions`);
}

function updateChip(chip, { reaction }, names) {
  const button = chip.firstElementChild;
  button.setAttribute("aria-pressed", String(Boolean(reaction.mine)));
  button.setAttribute("aria-label", `${reaction.emoji} ${reaction.count}${reaction.mine ? ", including you" : ""}`);
  button.querySelector(".reaction-count").textContent = String(reaction.count);
  const who = names(reaction.userIds ?? []);
  button.title = who.length ? joinNames(who) : "";
}

/**
 * A row's own buttons (its quote, chips, info) are tab stops only while the row has focus (chat-view
 * `rowControls`): the list stays one tab stop, and the menu does what they do as well.
 */
export function rowControlIndex(li) {
  return li.contains(document.activeElement) ? 0 : -1;
}
