// My profile photo (docs/protocol.md "Files"): "Set profile photo…" in the account menu takes an
// image, crops it to its centred square and scales it to 512 px (a JPEG: no EXIF survives), uploads
// it (tus) and sets it (PUT /v1/me/photo); "Remove profile photo" takes it away (DELETE). Avatars show
// a user's `photo` wherever the initials show (dom.js), the initials when there is none.
import { $, errorText, toast } from "./dom.js";
import { base64Of, drawJPEG, thumbnailOf } from "./image-prep.js";
import { uploadAll } from "./tus.js";

const SIDE = 512;

export class ProfilePhoto {
  /** `getSession()` gives the signed-in session; `onChange(user)` hears of me as I am now. */
  constructor({ api, getSession, onChange }) {
    Object.assign(this, { api, getSession, onChange });
    $("photo-input").addEventListener("change", () => {
      const [file] = $("photo-input").files;
      $("photo-input").value = "";
      if (file) this.set(file);
    });
  }

  /** Opens the file chooser (from the menu: a click, so the browser lets it open). */
  choose() { $("photo-input").click(); }

  async set(file) {
    const session = this.getSession();
    if (!session) return;
    toast("Setting your profile photo…");
    try {
      const bitmap = await createImageBitmap(file, { imageOrientation: "from-image" }).catch(() => {
        throw new Error("That file is not an image this browser can read.");
      });
      const side = Math.min(bitmap.width, bitmap.height);
      const crop = { sx: (bitmap.width - side) / 2, sy: (bitmap.height - side) / 2, sw: side, sh: side };
      const blob = await drawJPEG(bitmap, crop, SIDE, SIDE, 0.9);
      const thumbnail = thumbnailOf(bitmap, bitmap.width, bitmap.height, crop);
      bitmap.close();
      const { id } = await uploadAll(session.token, new File([blob], "profile.jpg", { type: "image/jpeg" }), "profile.jpg");
      const body = { uploadId: id };
      if (thumbnail) body.thumbnail = base64Of(thumbnail);
      await this.api.request("PUT", "/v1/me/photo", body);
      this.onChange(await this.api.request("GET", "/v1/me"));
      toast("Your profile photo is set.");
    } catch (error) {
      toast(`Could not set your profile photo. ${errorText(error)}`);
    }
  }

  async remove() {
    try {
      await this.api.request("DELETE", "/v1/me/photo");
      this.onChange(await this.api.request("GET", "/v1/me"));
      toast("Your profile photo is removed.");
    } catch (error) {
      toast(`Could not remove your profile photo. ${errorText(error)}`);
    }
  }
}
