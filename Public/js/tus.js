// tus 1.0 (https://tus.io/protocols/resumable-upload) by hand, as docs/protocol.md "Files" serves it
// at /v1/uploads: create with the file's SHA-256 promised in the metadata, append chunks each with
// its own checksum, ask where to go on (HEAD), give up (DELETE). fetch, not XMLHttpRequest: progress
// is counted per chunk, which at 1 MiB is fine-grained enough.

const HEADERS = { "Tus-Resumable": "1.0.0" };

export class TusError extends Error {
  /** `status` 0 is a network failure; `offset` comes with 409; `retryAfter` (s) with 429. */
  constructor(status, code, message, { offset = null, retryAfter = null } = {}) {
    super(message);
    Object.assign(this, { status, code, offset, retryAfter });
  }
}

/** Base64 of the SHA-256 of a Blob's bytes. */
export async function sha256(blob) {
  const digest = await crypto.subtle.digest("SHA-256", await blob.arrayBuffer());
  return base64(new Uint8Array(digest));
}

function base64(bytes) {
  let binary = "";
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary);
}

const metadataValue = (text) => base64(new TextEncoder().encode(text));

async function call(token, method, url, headers = {}, body, signal) {
  let response;
  try {
    response = await fetch(url, { method, headers: { ...HEADERS, Authorization: `Bearer ${token}`, ...headers }, body, signal });
  } catch (error) {
    if (error?.name === "AbortError") throw error;
    throw new TusError(0, "offline", "Cannot reach the server.");
  }
  if (response.ok) return response;
  const data = await response.json().catch(() => null);
  const offset = Number.parseInt(response.headers.get("Upload-Offset") ?? "", 10);
  const retryAfter = Number.parseInt(response.headers.get("Retry-After") ?? "", 10);
  throw new TusError(response.status, data?.error?.code ?? `http_${response.status}`, data?.error?.message ?? `Upload failed (${response.status}).`,
    { offset: Number.isFinite(offset) ? offset : null, retryAfter: Number.isFinite(retryAfter) ? retryAfter : null });
}

/** The largest upload the server takes (`Tus-Max-Size`), or null when it does not say. */
export async function maxSize() {
  try {
    const response = await fetch("/v1/uploads", { method: "OPTIONS" });
    const max = Number.parseInt(response.headers.get("Tus-Max-Size") ?? "", 10);
    return Number.isFinite(max) && max > 0 ? max : null;
  } catch {
    return null;
  }
}

/**
 * Creates an upload: `{url, id, offset}` (url is a path on this origin). `original`: the file goes as
 * it was (sent as a file), so the server keeps a photo's metadata; otherwise it takes it out.
 */
export async function create(token, { size, name, type, digest, original = false }) {
  const metadata = [`filename ${metadataValue(name)}`, `filetype ${metadataValue(type || "application/octet-stream")}`];
  if (digest) metadata.push(`sha256 ${digest}`);
  if (original) metadata.push("original");
  const response = await call(token, "POST", "/v1/uploads", { "Upload-Length": String(size), "Upload-Metadata": metadata.join(",") });
  const location = response.headers.get("Location");
  const body = await response.json().catch(() => null);
  const url = location ? new URL(location, window.location.href).pathname : `/v1/uploads/${body?.id}`;
  const id = body?.id ?? url.split("/").pop();
  return { url, id, offset: Number.parseInt(response.headers.get("Upload-Offset") ?? "0", 10) || 0 };
}

/** Where an upload goes on (its stored offset). */
export async function offsetOf(token, url, signal) {
  const response = await call(token, "HEAD", url, {}, undefined, signal);
  return Number.parseInt(response.headers.get("Upload-Offset") ?? "0", 10) || 0;
}

/** Appends `chunk` at `offset`; resolves to the new offset. */
export async function append(token, url, offset, chunk, signal) {
  const checksum = await sha256(chunk);
  const response = await call(token, "PATCH", url, {
    "Content-Type": "application/offset+octet-stream", "Upload-Offset": String(offset), "Upload-Checksum": `sha256 ${checksum}`,
  }, chunk, signal);
  return Number.parseInt(response.headers.get("Upload-Offset") ?? "", 10) || offset + chunk.size;
}

/** Gives an upload up (the server removes what it kept). */
export async function remove(token, url) {
  await call(token, "DELETE", url).catch(() => {});
}

/**
 * Uploads `blob` whole, for things that need no resume (a profile photo): `{id}` once complete.
 * `onProgress(sent, total)` hears of each chunk.
 */
export async function uploadAll(token, blob, name, onProgress = () => {}) {
  const created = await create(token, { size: blob.size, name, type: blob.type, digest: await sha256(blob) });
  let offset = created.offset;
  while (offset < blob.size) {
    offset = await append(token, created.url, offset, blob.slice(offset, offset + CHUNK));
    onProgress(offset, blob.size);
  }
  return created;
}

export const CHUNK = 1024 * 1024;
