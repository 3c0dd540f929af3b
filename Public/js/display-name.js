// My display name (docs/protocol.md "REST"): "Change name…" in the account menu opens a dialog with
// the name as it is; Save sends it (PATCH /v1/me). The server's rules decide, and its message says
// what is wrong, in the dialog, which stays open. Everyone I chat with hears of it live (a `profile`
// frame), and so do my other devices.
import { $, errorText, toast } from "./dom.js";
import { closeDialog, openDialog, restoreFocusOnClose } from "./dialog.js";

export class DisplayNameDialog {
  /** `getSession()` gives the signed-in session; `onChange(user)` hears of me as I am now. */
  constructor({ api, getSession, onChange }) {
    Object.assign(this, { api, getSession, onChange, saving: false });
    restoreFocusOnClose($("name-dialog"));
    $("name-cancel").addEventListener("click", () => closeDialog($("name-dialog")));
    $("name-form").addEventListener("submit", (event) => { event.preventDefault(); this.save(); });
    $("name-input").addEventListener("input", () => this.showError(""));
  }

  open() {
    const session = this.getSession();
    if (!session) return;
    $("name-input").value = session.user.displayName ?? "";
    this.showError("");
    openDialog($("name-dialog"), $("name-input"));
    $("name-input").select();
  }

  async save() {
    const session = this.getSession();
    const name = $("name-input").value;
    if (!session || this.saving) return;
    if (!name.trim()) return this.showError("Your name cannot be empty.");
    this.saving = true;
    $("name-save").disabled = true;
    try {
      const user = await this.api.request("PATCH", "/v1/me", { displayName: name });
      this.onChange(user);
      closeDialog($("name-dialog"));
      toast(`Everyone you chat with now sees you as “${user.displayName}”.`);
    } catch (error) {
      this.showError(errorText(error));
      $("name-input").focus();
    } finally {
      this.saving = false;
      $("name-save").disabled = false;
    }
  }

  showError(text) {
    $("name-error").textContent = text;
    $("name-error").hidden = !text;
    $("name-input").setAttribute("aria-invalid", text ? "true" : "false");
  }
}
