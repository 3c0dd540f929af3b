// Picking people for a group: a search (GET /v1/users, at least 3 characters, as the server
// requires) whose results are buttons, and the people picked shown as removable chips.
import { avatar, el } from "./dom.js";

export class PeoplePicker {
  /**
   * `input`, `results` (a <ul>), `chips` (a <ul>); `exclude()` gives the ids that cannot be picked
   * (me, members already in); `onChange()` hears of every pick and removal.
   */
  constructor({ api, input, results, chips, exclude, onChange, remember }) {
    Object.assign(this, { api, input, results, chips, exclude, onChange, remember });
    this.picked = new Map();
    this.generation = 0;
    this.shownFor = "";  // the search text the results shown answer (null while one is on its way)
    let debounce;
    input.addEventListener("input", () => {
      clearTimeout(debounce);
      debounce = setTimeout(() => this.search(input.value.trim()), 200);
    });
    // Enter in the search picks the first person found, rather than submitting the whole form.
    input.addEventListener("keydown", (event) => {
      if (event.key !== "Enter" || event.isComposing) return;
      event.preventDefault();
      clearTimeout(debounce);
      this.pickFirst(input.value.trim());
    });
  }

  /**
   * Enter: the first person found for what the box says now — searched at once when the results
   * shown answer an earlier text (a fast typist is ahead of the debounce) — added, never taken off:
   * Enter on someone already picked does nothing.
   */
  async pickFirst(query) {
    if (this.shownFor !== query) await this.search(query);
    if (this.shownFor !== query || this.input.value.trim() !== query) return;
    const first = this.results.querySelector("button.person");
    if (first && first.getAttribute("aria-pressed") !== "true") first.click();
  }

  reset() {
    this.picked.clear();
    this.input.value = "";
    this.results.replaceChildren();
    this.shownFor = "";
    this.renderChips();
  }

  get users() { return [...this.picked.values()]; }

  async search(query) {
    const generation = ++this.generation;  // an older answer arriving late must not overwrite a newer one
    this.shownFor = null;
    if (!query) { this.results.replaceChildren(); this.shownFor = query; return; }
    if ([...query].length < 3) { this.results.replaceChildren(el("li", "muted hint", "Type at least 3 characters")); this.shownFor = query; return; }
    try {
      const { users } = await this.api.searchUsers(query);
      if (generation !== this.generation) return;
      const excluded = this.exclude();
      const shown = users.filter((user) => !excluded.has(user.id));
      for (const user of users) this.remember?.(user);
      this.results.replaceChildren(...shown.map((user) => this.resultRow(user)));
      if (!shown.length) this.results.replaceChildren(el("li", "muted hint", "Nobody found"));
      this.shownFor = query;
    } catch (error) {
      if (generation === this.generation) this.results.replaceChildren(el("li", "error hint", error.message));
    }
  }

  resultRow(user) {
    const picked = this.picked.has(user.id);
    const button = el("button", "person");
    button.type = "button";
    button.setAttribute("aria-pressed", String(picked));
    button.dataset.userId = user.id;
    button.append(avatar(user.displayName, user.id, false, user.photo));
    const main = el("span", "row-main");
    main.append(el("span", "row-name", user.displayName), el("span", "row-preview", `@${user.username}`));
    button.append(main, el("span", "check", picked ? "✓" : ""));
    button.addEventListener("click", () => {
      if (this.picked.has(user.id)) this.picked.delete(user.id);
      else this.picked.set(user.id, user);
      const now = this.picked.has(user.id);
      button.setAttribute("aria-pressed", String(now));
      button.querySelector(".check").textContent = now ? "✓" : "";
      this.renderChips();
    });
    const item = el("li");
    item.append(button);
    return item;
  }

  renderChips() {
    this.chips.replaceChildren(...this.users.map((user) => {
      const chip = el("li", "chip");
      const remove = el("button", "chip-remove", "×");
      remove.type = "button";
      remove.setAttribute("aria-label", `Remove ${user.displayName}`);
      remove.addEventListener("click", () => {
        this.picked.delete(user.id);
        const shown = [...this.results.querySelectorAll("button.person")].find((b) => b.dataset.userId === user.id);
        shown?.setAttribute("aria-pressed", "false");
        if (shown) shown.querySelector(".check").textContent = "";
        this.renderChips();
        this.input.focus();
      });
      chip.append(el("span", null, user.displayName), remove);
      return chip;
    }));
    this.chips.hidden = this.picked.size === 0;
    this.onChange?.();
  }
}
