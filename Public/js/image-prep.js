// What the browser makes of a chosen file before it is sent: its kind, a small thumbnail (≤ 64 px,
// ≤ 12 KiB, base64: the server's limits), a BlurHash, an image's or video's size, a video's length;
// and the photo itself re-encoded (≤ 2048 px, JPEG), which also drops EXIF and with it the place
// a photo was taken. Decoding goes through createImageBitmap with the EXIF orientation applied, so
// a phone's portrait photo stays upright once its EXIF is gone. GIFs keep their animation: sent as
// they are. Thumbnails are data URLs: they travel in the send.
import { encodeBlurHash } from "./blurhash.js";

export const MAX_SIDE = 2048;
const QUALITY = 0.85;
const THUMB_SIDE = 64;
const THUMB_BYTES = 12 * 1024;
const HASH_SIDE = 32;

/** `image`, `video`, `audio` or `file`, from the type the browser gives (the server reads the bytes). */
export function kindOf(file) {
  const type = file.type || "";
  for (const kind of ["image", "video", "audio"]) if (type.startsWith(`${kind}/`)) return kind;
  return "file";
}

/** Whether `file` is a photo this page re-encodes (not a GIF: its animation would be lost). */
export function reencodes(file) {
  return kindOf(file) === "image" && file.type !== "image/gif" && file.type !== "image/svg+xml";
}

/** `{kind, width?, height?, durationMs?, thumbnail?: data URL, placeholder?}` of a file; never throws. */
export async function describe(file) {
  const kind = kindOf(file);
  try {
    if (kind === "image" && file.type !== "image/svg+xml") return { kind, ...await describeImage(file) };
    if (kind === "video") return { kind, ...await describeVideo(file) };
  } catch {
    // Not decodable here (HEIC in most browsers, a damaged file): it goes as a file, without a preview.
    if (kind === "image") return { kind: "file", undecodable: true };
  }
  return { kind };
}

async function describeImage(file) {
  const bitmap = await createImageBitmap(file, { imageOrientation: "from-image" });
  try {
    return { width: bitmap.width, height: bitmap.height, ...previews(bitmap, bitmap.width, bitmap.height) };
  } finally {
    bitmap.close();
  }
}

/** A thumbnail and a BlurHash of something drawable (`width` × `height`). */
function previews(source, width, height) {
  const small = fit(width, height, HASH_SIDE);
  const hashCanvas = canvas(small.width, small.height);
  const context = hashCanvas.getContext("2d", { willReadFrequently: true });
  context.drawImage(source, 0, 0, small.width, small.height);
  const pixels = context.getImageData(0, 0, small.width, small.height).data;
  return { thumbnail: thumbnailOf(source, width, height), placeholder: encodeBlurHash(pixels, small.width, small.height) };
}

/** A JPEG data URL of (a `crop` of) `source`, at most THUMB_SIDE px a side and THUMB_BYTES decoded, or undefined. */
export function thumbnailOf(source, width, height, crop = { sx: 0, sy: 0, sw: width, sh: height }) {
  const size = fit(crop.sw, crop.sh, THUMB_SIDE);
  const surface = canvas(size.width, size.height);
  const context = surface.getContext("2d");
  context.fillStyle = "#fff";  // a transparent PNG's background, as JPEG has no transparency
  context.fillRect(0, 0, size.width, size.height);
  context.drawImage(source, crop.sx, crop.sy, crop.sw, crop.sh, 0, 0, size.width, size.height);
  for (const quality of [0.8, 0.6, 0.4]) {
    const url = surface.toDataURL("image/jpeg", quality);
    if (atob(url.slice(url.indexOf(",") + 1)).length <= THUMB_BYTES) return url;
  }
  return undefined;
}

/** A video's size, length and first frame, read by a <video> element on a blob: URL (the CSP's media-src allows it). */
function describeVideo(file) {
  return new Promise((resolve) => {
    const video = document.createElement("video");
    const url = URL.createObjectURL(file);
    let result = {};
    const done = () => { clearTimeout(timer); URL.revokeObjectURL(url); video.removeAttribute("src"); resolve(result); };
    const timer = setTimeout(done, 5000);
    video.muted = true;
    video.preload = "metadata";
    video.addEventListener("error", done);
    video.addEventListener("loadedmetadata", () => {
      result = { width: video.videoWidth || undefined, height: video.videoHeight || undefined };
      if (Number.isFinite(video.duration)) result.durationMs = Math.round(video.duration * 1000);
      video.currentTime = Math.min(0.1, video.duration || 0);
    });
    video.addEventListener("seeked", () => {
      try { if (video.videoWidth) Object.assign(result, previews(video, video.videoWidth, video.videoHeight)); } catch { /* a frame we may not read */ }
      done();
    });
    video.src = url;
  });
}

/**
 * The photo to upload: decoded upright, scaled to at most MAX_SIDE px on its long side, JPEG. Only
 * the pixels are kept, so EXIF (camera, time, GPS) is gone. A file that will not decode is sent as it is.
 */
export async function reencode(file) {
  let bitmap;
  try { bitmap = await createImageBitmap(file, { imageOrientation: "from-image" }); } catch { return file; }
  try {
    const size = fit(bitmap.width, bitmap.height, MAX_SIDE);
    const blob = await drawJPEG(bitmap, { sx: 0, sy: 0, sw: bitmap.width, sh: bitmap.height }, size.width, size.height, QUALITY);
    return new File([blob], renamed(file.name, "jpg"), { type: "image/jpeg" });
  } finally {
    bitmap.close();
  }
}

/** Draws a part of `source` (`{sx, sy, sw, sh}`) at `width` × `height` on white, as a JPEG Blob. */
export async function drawJPEG(source, { sx, sy, sw, sh }, width, height, quality) {
  const surface = canvas(width, height, true);
  const context = surface.getContext("2d");
  context.fillStyle = "#fff";
  context.fillRect(0, 0, width, height);
  context.imageSmoothingQuality = "high";
  context.drawImage(source, sx, sy, sw, sh, 0, 0, width, height);
  if (surface.convertToBlob) return surface.convertToBlob({ type: "image/jpeg", quality });
  return new Promise((resolve, reject) => surface.toBlob((blob) => (blob ? resolve(blob) : reject(new Error("encode"))), "image/jpeg", quality));
}

/** `width` × `height` scaled down (never up) so the long side is at most `side`. */
export function fit(width, height, side) {
  const scale = Math.min(1, side / Math.max(width, height));
  return { width: Math.max(1, Math.round(width * scale)), height: Math.max(1, Math.round(height * scale)) };
}

// OffscreenCanvas where there is one (no layout, and convertToBlob); thumbnails need toDataURL: a <canvas>.
function canvas(width, height, offscreen = false) {
  if (offscreen && typeof OffscreenCanvas === "function") return new OffscreenCanvas(width, height);
  return Object.assign(document.createElement("canvas"), { width, height });
}

function renamed(name, extension) {
  const base = name.replace(/\.[^.]*$/, "") || "photo";
  return `${base}.${extension}`;
}

/** The base64 of a data URL (what a send's `thumbnail` carries). */
export function base64Of(dataUrl) {
  return dataUrl ? dataUrl.slice(dataUrl.indexOf(",") + 1) : undefined;
}
