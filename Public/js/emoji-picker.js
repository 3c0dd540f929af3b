// The fuller reaction picker ("More…" in the message menu): a modal dialog with a filter box and a
// grid of common emoji, each named for screen readers and for the filter. Arrow keys move in the
// grid, Enter picks, Escape closes (focus goes back to the message).
import { closeDialog, openDialog, restoreFocusOnClose } from "./dialog.js";
import { $, el } from "./dom.js";

// [emoji, name, more words the filter finds it by]
export const EMOJI = [
  ["👍", "thumbs up", "yes like ok"], ["👎", "thumbs down", "no dislike"], ["❤️", "red heart", "love"], ["😂", "tears of joy", "laugh lol"],
  ["😮", "surprised", "wow open mouth"], ["😢", "crying", "sad tear"], ["🙏", "folded hands", "please thanks pray"], ["😀", "grinning", "smile happy"],
  ["😊", "smiling", "blush happy"], ["😍", "heart eyes", "love"], ["🥰", "smiling with hearts", "love"], ["😘", "blowing a kiss", "kiss"],
  ["😉", "winking", "wink"], ["😎", "sunglasses", "cool"], ["🤔", "thinking", "hmm"], ["🙄", "rolling eyes", "eye roll"],
  ["😅", "sweat smile", "relief phew"], ["🤣", "rolling on the floor laughing", "rofl lol"], ["😭", "loudly crying", "sob sad"], ["😡", "angry", "pouting mad"],
  ["😱", "screaming", "fear shock"], ["🤯", "mind blown", "exploding head"], ["🥳", "party face", "celebrate birthday"], ["😴", "sleeping", "tired zzz"],
  ["🤗", "hugging", "hug"], ["🤝", "handshake", "deal agree"], ["👏", "clapping", "applause bravo"], ["🙌", "raised hands", "hooray"],
  ["👀", "eyes", "look see"], ["💯", "hundred points", "perfect"], ["🔥", "fire", "lit hot"], ["✨", "sparkles", "shiny new"],
  ["🎉", "party popper", "celebrate tada"], ["✅", "check mark", "done yes"], ["❌", "cross mark", "no wrong"], ["⭐", "star", "favourite"],
  ["💪", "flexed biceps", "strong"], ["👌", "ok hand", "perfect"], ["✌️", "victory hand", "peace"], ["🤞", "crossed fingers", "luck hope"],
  ["💔", "broken heart", "sad"], ["🚀", "rocket", "launch ship"], ["☕", "coffee", "hot beverage tea"], ["🍕", "pizza", "food"],
];

export class EmojiPicker {
  constructor() {
    this.dialog = $("emoji-dialog");
    this.onPick = null;
    restoreFocusOnClose(this.dialog);
    this.dialog.addEventListener("close", () => { this.onPick = null; });
    $("emoji-close").addEventListener("click", () => closeDialog(this.dialog));
    $("emoji-filter").addEventListener("input", () => this.filter());
    $("emoji-filter").addEventListener("keydown", (event) => {
      if (event.key === "ArrowDown" || (event.key === "Enter" && !event.isComposing)) {
        event.preventDefault();
        const first = this.visibleButtons()[0];
        if (event.key === "Enter" && first) this.pick(first.dataset.emoji);
        else first?.focus();
      }
    });
    const grid = $("emoji-grid");
    grid.addEventListener("click", (event) => {
      const button = event.target.closest("button[data-emoji]");
      if (button) this.pick(button.dataset.emoji);
    });
    grid.addEventListener("keydown", (event) => this.moveInGrid(event));
  }

  /** Opens the picker; `onPick(emoji)` hears the choice (the dialog closes first). */
  open(onPick, focusAfter) {
    this.onPick = onPick;
    this.focusAfter = focusAfter;
    if (!$("emoji-grid").childElementCount) {
      $("emoji-grid").append(...EMOJI.map(([emoji, name, words]) => {
        const button = el("button", "emoji-option", emoji);
        button.type = "button";
        button.dataset.emoji = emoji;
        button.dataset.words = `${name} ${words}`;
        button.setAttribute("aria-label", name);
        button.title = name;
        return button;
      }));
    }
    $("emoji-filter").value = "";
    this.filter();
    openDialog(this.dialog, $("emoji-filter"));
  }

  filter() {
    const query = $("emoji-filter").value.trim().toLowerCase();
    let shown = 0;
    for (const button of $("emoji-grid").children) {
      const match = !query || button.dataset.words.includes(query) || button.dataset.emoji === query;
      button.hidden = !match;
      if (match) shown++;
    }
    $("emoji-empty").hidden = shown > 0;
  }

  visibleButtons() { return [...$("emoji-grid").children].filter((button) => !button.hidden); }

  pick(emoji) {
    const onPick = this.onPick;
    const focusAfter = this.focusAfter;
    closeDialog(this.dialog);
    focusAfter?.focus?.();
    onPick?.(emoji);
  }

  /** Arrows move through the grid as it is laid out (a row is the buttons sharing a top edge). */
  moveInGrid(event) {
    const buttons = this.visibleButtons();
    const index = buttons.indexOf(document.activeElement);
    if (index < 0) return;
    const top = buttons[0].offsetTop;
    const columns = Math.max(1, buttons.filter((button) => button.offsetTop === top).length);
    const moves = { ArrowRight: 1, ArrowLeft: -1, ArrowDown: columns, ArrowUp: -columns, Home: -index, End: buttons.length - 1 - index };
    if (!(event.key in moves)) return;
    event.preventDefault();
    const next = index + moves[event.key];
    if (next < 0 && event.key === "ArrowUp") { $("emoji-filter").focus(); return; }
    buttons[Math.min(buttons.length - 1, Math.max(0, next))].focus();
  }
}
