// "New group": a title and people picked by search. The create carries a clientId kept for this
// dialog until the server answers, so "Create" pressed again after a network error cannot make
// two groups (the server answers the first).
import { closeDialog, openDialog, restoreFocusOnClose } from "./dialog.js";
import { $, errorText, toast } from "./dom.js";
import { MAX_CODE_POINTS_PER_CHARACTER, characterCount, joinNames, overloadedCharacter } from "./format.js";
import { PeoplePicker } from "./people-picker.js";

export const MAX_TITLE = 100;

/** The title the server would store, or an error message. */
export function checkTitle(raw) {
  const title = raw.trim();
  if (!title) return { error: "Give the group a name." };
  if (characterCount(title) > MAX_TITLE) return { error: `The name can be at most ${MAX_TITLE} characters.` };
  if (/\p{Cc}/u.test(title)) return { error: "The name cannot contain control characters." };
  if (overloadedCharacter(title)) return { error: `A character of the name carries more than ${MAX_CODE_POINTS_PER_CHARACTER} accents or marks.` };
  return { title };
}

export class NewGroupDialog {
  constructor(store, { onOpen }) {
    this.store = store;
    this.onOpen = onOpen;
    this.dialog = $("new-group-dialog");
    restoreFocusOnClose(this.dialog);
    this.picker = new PeoplePicker({
      api: store.api, input: $("group-people-input"), results: $("group-people-results"), chips: $("group-chips"),
      exclude: () => new Set([store.me]), onChange: () => this.showError(null), remember: (user) => store.groups.remember(user),
    });
    $("new-group-form").addEventListener("submit", (event) => { event.preventDefault(); this.create(); });
    $("new-group-cancel").addEventListener("click", () => closeDialog(this.dialog));
    $("group-title-input").addEventListener("input", () => this.showError(null));
  }

  open() {
    this.actionKey = `create:${crypto.randomUUID()}`;  // one group per opening, however often retried
    $("group-title-input").value = "";
    this.picker.reset();
    this.showError(null);
    openDialog(this.dialog, $("group-title-input"));
  }

  showError(text) {
    $("new-group-error").textContent = text ?? "";
    $("new-group-error").hidden = !text;
  }

  async create() {
    const { title, error } = checkTitle($("group-title-input").value);
    if (error) { this.showError(error); $("group-title-input").focus(); return; }
    const people = this.picker.users;
    if (!people.length) { this.showError("Add at least one person."); $("group-people-input").focus(); return; }
    const button = $("new-group-create");
    button.disabled = true;
    button.textContent = "Creating…";
    try {
      const ids = people.map((user) => user.id);
      const result = await this.store.groups.act(this.actionKey, (clientId) => this.store.api.createGroup(clientId, title, ids));
      this.store.addSummary(result.conversation);
      if (result.entry) this.store.applyMessage(result.entry);
      this.store.changed();
      closeDialog(this.dialog);
      this.onOpen(result.conversation.id);
      const invited = (result.invited ?? []).map((id) => people.find((user) => user.id === id)?.displayName ?? this.store.nameOf(id) ?? "someone");
      if (invited.length) toast(`Invitations sent to ${joinNames(invited)}`);
    } catch (failure) {
      this.showError(errorText(failure));
    } finally {
      button.disabled = false;
      button.textContent = "Create group";
    }
  }
}
