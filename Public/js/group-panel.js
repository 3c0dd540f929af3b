// The group's panel (opened from the chat header): members with their roles, and what my role
// allows: admins and the owner add, remove and rename; the owner makes and dismisses admins;
// everyone may leave. Each action carries a clientId
// kept until the server answers (GroupState.act), so a retry never acts twice.
import { closeDialog, confirmDialog, openDialog, restoreFocusOnClose } from "./dialog.js";
import { $, avatar, el, errorText, reconcile, toast } from "./dom.js";
import { joinNames } from "./format.js";
import { checkTitle } from "./new-group.js";
import { PeoplePicker } from "./people-picker.js";

const ROLE_LABELS = { owner: "Owner", admin: "Admin" };

export class GroupPanel {
  constructor(store) {
    this.store = store;
    this.id = null;
    this.dialog = $("group-dialog");
    restoreFocusOnClose(this.dialog);
    this.dialog.addEventListener("close", () => { this.id = null; });
    $("group-dialog-close").addEventListener("click", () => closeDialog(this.dialog));
    $("rename-form").addEventListener("submit", (event) => { event.preventDefault(); this.rename(); });
    $("leave-group").addEventListener("click", () => this.leave());
    $("add-members-toggle").addEventListener("click", () => this.showAdd($("add-members").hidden));
    $("add-members-button").addEventListener("click", () => this.addMembers());
    this.picker = new PeoplePicker({
      api: store.api, input: $("add-people-input"), results: $("add-people-results"), chips: $("add-chips"),
      exclude: () => new Set(this.summary?.members.map((m) => m.userId) ?? []), remember: (user) => store.groups.remember(user),
      onChange: () => { $("add-members-button").disabled = this.picker.picked.size === 0; },
    });
  }

  get summary() { return this.id ? this.store.conversations.get(this.id) : null; }

  get myRole() { return this.summary && this.store.me_(this.summary)?.role; }

  open(id) {
    this.id = id;
    this.showError(null);
    this.showAdd(false);
    const summary = this.summary;
    $("rename-input").value = summary?.title ?? "";
    this.render();
    openDialog(this.dialog, $("group-dialog-close"));
  }

  showAdd(show) {
    $("add-members").hidden = !show;
    $("add-members-toggle").setAttribute("aria-expanded", String(show));
    if (show) $("add-people-input").focus();
    else this.picker.reset();
  }

  showError(text) {
    $("group-dialog-error").textContent = text ?? "";
    $("group-dialog-error").hidden = !text;
  }

  render() {
    const summary = this.summary;
    if (!this.id || !summary) return;
    const left = Boolean(summary.leftSeq);
    const role = left ? null : this.myRole;
    const manages = role === "owner" || role === "admin";
    $("group-dialog-title").textContent = summary.title ?? "Group";
    $("group-dialog-count").textContent = left ? "You are no longer a member of this group." : memberCount(summary.members.length);
    $("rename-form").hidden = !manages;
    $("add-members-toggle").hidden = !manages;
    if (!manages) $("add-members").hidden = true;
    $("leave-group").hidden = left;
    $("members-heading").hidden = left;
    const order = { owner: 0, admin: 1 };
    const members = left ? [] : [...summary.members].sort((a, b) =>
      (a.userId === this.store.me ? -1 : b.userId === this.store.me ? 1 : 0) || (order[a.role] ?? 2) - (order[b.role] ?? 2)
      || a.displayName.localeCompare(b.displayName));
    const items = members.map((member) => ({ key: member.userId, member, role }));
    // A row rebuilt or moved (a role changed, someone left) loses the keyboard focus it held: give it back.
    const active = document.activeElement;
    const row = active?.closest?.("#member-list li");
    const focus = row ? { key: row.dataset.key, action: active.dataset.action } : null;
    reconcile($("member-list"), items, (item) => this.memberRow(item), (li, item) => this.updateMemberRow(li, item));
    if (focus && !$("member-list").contains(document.activeElement) && !$("confirm-dialog").open) {
      const li = [...$("member-list").children].find((child) => child.dataset.key === focus.key);
      (li?.querySelector(`[data-action="${focus.action}"]`) ?? li?.querySelector("button") ?? $("group-dialog-close")).focus();
    }
  }

  memberRow(item) {
    const li = el("li", "member");
    this.updateMemberRow(li, item);
    return li;
  }

  updateMemberRow(li, { member, role: myRole }) {
    const me = member.userId === this.store.me;
    const photo = this.store.photoOf(member);
    const signature = [member.displayName, member.role, myRole, photo].join("|");
    if (li.dataset.signature === signature) return;
    li.dataset.signature = signature;
    const main = el("span", "row-main");
    const sub = el("span", "member-sub");
    sub.append(el("span", "row-preview", `@${member.username}`));
    if (ROLE_LABELS[member.role]) sub.append(el("span", `role role-${member.role}`, ROLE_LABELS[member.role]));
    main.append(el("span", "row-name", me ? `${member.displayName} (You)` : member.displayName), sub);
    const parts = [avatar(member.displayName, member.userId, false, photo), main];
    const actions = el("span", "member-actions");
    const name = member.displayName;
    if (!me && member.role !== "owner") {
      if (myRole === "owner") {
        const admin = member.role === "admin";
        actions.append(this.actionButton(admin ? "Dismiss as admin" : "Make admin", admin ? `Dismiss ${name} as admin` : `Make ${name} an admin`,
          "role", () => this.setRole(member, admin ? "member" : "admin")));
      }
      if (myRole === "owner" || myRole === "admin") {
        actions.append(this.actionButton("Remove", `Remove ${name}`, "remove", () => this.remove(member)));
      }
    }
    if (actions.childElementCount) parts.push(actions);
    li.replaceChildren(...parts);
  }

  actionButton(text, label, action, run) {
    const button = el("button", "small", text);
    button.type = "button";
    button.dataset.action = action;
    button.setAttribute("aria-label", label);
    button.addEventListener("click", run);
    return button;
  }

  /** Runs an action; its entry is applied at once (the stream brings it too, harmlessly). */
  async run(key, call) {
    const id = this.id;
    this.showError(null);
    try {
      const result = await this.store.groups.act(`${key}:${id}`, (clientId) => call(id, clientId));
      if (result?.entry) this.store.applyMessage(result.entry);
      this.store.changed();
      return result;
    } catch (error) {
      this.showError(errorText(error));
      return null;
    }
  }

  async rename() {
    const { title, error } = checkTitle($("rename-input").value);
    if (error) { this.showError(error); return; }
    if (title === this.summary?.title) return;
    const result = await this.run(`rename:${title}`, (id, clientId) => this.store.api.renameGroup(id, title, clientId));
    if (result) toast(`Group renamed to “${title}”`);
  }

  setRole(member, role) {
    return this.run(`role:${member.userId}:${role}`, (id, clientId) => this.store.api.setRole(id, member.userId, role, clientId));
  }

  async remove(member) {
    const title = this.summary?.title ?? "the group";
    if (!await confirmDialog({ title: "Remove member?", text: `Remove ${member.displayName} (@${member.username}) from “${title}”?`, confirmLabel: "Remove" })) return;
    await this.run(`remove:${member.userId}`, (id, clientId) => this.store.api.removeMember(id, member.userId, clientId));
  }

  async addMembers() {
    const people = this.picker.users;
    if (!people.length) return;
    const ids = people.map((user) => user.id);
    const result = await this.run(`add:${ids.join(",")}`, (id, clientId) => this.store.api.addMembers(id, clientId, ids));
    if (!result) return;
    this.showAdd(false);
    $("add-members-toggle").focus();
    const invited = (result.invited ?? []).map((id) => people.find((user) => user.id === id)?.displayName ?? "someone");
    if (invited.length) toast(`Invitations sent to ${joinNames(invited)}`);
  }

  async leave() {
    const title = this.summary?.title ?? "this group";
    if (!await confirmDialog({ title: "Leave group?", text: `Leave “${title}”? You will no longer get its messages.`, confirmLabel: "Leave group" })) return;
    const result = await this.run("leave", (id, clientId) => this.store.api.leaveGroup(id, clientId));
    if (result) closeDialog(this.dialog);
  }
}

export function memberCount(count) {
  return count === 1 ? "1 member" : `${count} members`;
}
