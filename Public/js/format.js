// Pure helpers: dates, initials, text rules. Shared by the views; no DOM access.

export const MAX_CHARACTERS = 10000;
export const COUNTER_THRESHOLD = 9000;

const segmenter = typeof Intl.Segmenter === "function" ? new Intl.Segmenter(undefined, { granularity: "grapheme" }) : null;

/** Characters as people count them (grapheme clusters), like Swift's `Character` count on the server. */
export function characterCount(text) {
  if (!segmenter) return [...text].length;
  let count = 0;
  for (const _ of segmenter.segment(text)) count++;
  return count;
}

/** `text` cut to `max` characters as the server cuts a notification's text: the first `max - 1` and "…". */
export function cutText(text, max) {
  if (characterCount(text) <= max) return text;
  const kept = segmenter ? [...segmenter.segment(text)].slice(0, max - 1).map((part) => part.segment) : [...text].slice(0, max - 1);
  return `${kept.join("")}…`;
}

/** The text the server would store: CRLF/CR → LF, trimmed. */
export function normalizedText(raw) {
  return raw.replace(/\r\n?/g, "\n").trim();
}

/** Whether the composer may send `raw` (something visible after trimming, at most 10,000 characters, none overloaded). */
export function canSend(raw) {
  const text = normalizedText(raw);
  return !isBlank(text) && characterCount(text) <= MAX_CHARACTERS && !overloadedCharacter(text);
}

// What draws nothing, as the server counts it (Validation.isInvisible): default-ignorable code
// points (zero-width spaces, Hangul fillers), format characters, marks with nothing to sit on,
// spaces and separators, controls, the blank Braille pattern.
const INVISIBLE = /[\p{Default_Ignorable_Code_Point}\p{Cf}\p{Mn}\p{Me}\p{Zs}\p{Zl}\p{Zp}\p{Cc}\u2800]/u;

// Letters drawn like a Latin one, as it (Validation.lookalikes in Swift: the same table).
const LOOKALIKES = new Map(Object.entries({
  y: [0x03A5, 0x03D2, 0x03B3, 0x04AE, 0x04AF, 0x0423, 0x0443, 0x028F, 0x0263, 0x13A9, 0x10E7, 0x1EFF],
  o: [0x0030, 0x039F, 0x03BF, 0x03C3, 0x03C2, 0x041E, 0x043E, 0x0555, 0x0585, 0x05E1, 0x1D0F, 0x1D11, 0x2C9E, 0x2C9F, 0x0D20, 0x0B20, 0x101D],
  u: [0x03C5, 0x054D, 0x057D, 0x1D1C, 0x028A, 0x028B, 0xA79F, 0xAB4E, 0x1959, 0x144C, 0x118D8],
  a: [0x0391, 0x03B1, 0x0410, 0x0430], b: [0x0392, 0x0412, 0x042C], c: [0x0421, 0x0441, 0x03F2, 0x03F9], d: [0x0501],
  e: [0x0395, 0x0415, 0x0435], g: [0x0261], h: [0x0397, 0x041D, 0x04BA, 0x04BB], j: [0x0408, 0x0458, 0x03F3, 0x0237], k: [0x039A, 0x03BA, 0x041A],
  l: [0x0049, 0x0069, 0x0031, 0x007C, 0x01C0, 0x0399, 0x0406, 0x04C0, 0x04CF, 0x0131, 0x03B9, 0x0456],  // I, i and l are one
  m: [0x039C, 0x041C], n: [0x039D], p: [0x03A1, 0x03C1, 0x0420, 0x0440], q: [0x051A, 0x051B], s: [0x0405, 0x0455],
  t: [0x03A4, 0x0422], v: [0x03BD], w: [0x051C, 0x051D], x: [0x03A7, 0x03C7, 0x0425, 0x0445], z: [0x0396],
}).concat(Object.entries({  // Lisu
  a: [0xA4EE], b: [0xA4D0], c: [0xA4DA], d: [0xA4D3], e: [0xA4F0], g: [0xA4D6], h: [0xA4E7], j: [0xA4D9], k: [0xA4D7],
  l: [0xA4F2, 0xA4E1], m: [0xA4DF], n: [0xA4E0], o: [0xA4F3, 0x0966, 0x1040], p: [0xA4D1], r: [0xA4E3], s: [0xA4E2], t: [0xA4D4],
  u: [0xA4F4], v: [0xA4E6], w: [0xA4EA], x: [0xA4EB], y: [0xA4EC], z: [0xA4DC],
})).concat(Object.entries({  // Latin small capitals, Cherokee, Canadian syllabics, Coptic and a few symbols
  a: [0x1D00, 0x0251, 0x237A, 0x13AA, 0x15C5, 0x2C80, 0x2C81],
  b: [0x0299, 0x13F4, 0x15F7, 0x2C82],
  c: [0x1D04, 0x13DF, 0x1455, 0x2CA4, 0x2CA5],
  d: [0x1D05, 0x13A0, 0x15EA],
  e: [0x1D07, 0x13AC, 0x2C88],
  g: [0x0262, 0x13C0],
  h: [0x029C, 0x13BB, 0x157C, 0x2C8E],
  j: [0x1D0A, 0x13AB, 0x148D],
  k: [0x1D0B, 0x13E6, 0x2C94],
  l: [0x026A, 0x029F, 0x0269, 0x13DE, 0x14AA, 0x2C92, 0x2CD0],
  m: [0x1D0D, 0x13B7, 0x2C98],
  n: [0x0274, 0x2C9A],
  p: [0x1D18, 0x13E2, 0x146D, 0x2CA2, 0x2CA3],
  r: [0x0280, 0x13D2],
  s: [0xA731, 0x13DA, 0x1515],
  t: [0x1D1B, 0x13A2, 0x2CA6],
  v: [0x1D20, 0x0474, 0x0475, 0x13D9, 0x142F, 0x2228],
  w: [0x1D21, 0x13B3, 0x15EF],
  x: [0x2CAC],
  z: [0x1D22, 0x13C3],
})).concat(Object.entries({  // found by a hostile pass: e's, Indic, Thai, Lao, Khmer zeros and the Arabic-Indic five, a syllabic d
  e: [0x0454, 0x04BD, 0x04D9, 0x0259, 0x212E, 0xAB32],
  o: [0x09E6, 0x0A66, 0x0AE6, 0x0B66, 0x0BE6, 0x0C66, 0x0CE6, 0x0D66, 0x0E50, 0x0ED0, 0x17E0, 0x0665],
  d: [0x146F],
})).flatMap(([latin, codes]) => codes.flatMap((code) => [[code, latin], ...cherokeeSmall(code, latin)]))
  .map(([code, latin]) => [String.fromCodePoint(code), latin]));

/** Cherokee's small letters are drawn as its capitals (U+AB70… for U+13A0…, U+13F8… for U+13F0…). */
function cherokeeSmall(code, latin) {
  if (code >= 0x13A0 && code <= 0x13EF) return [[code + 0xAB70 - 0x13A0, latin]];
  if (code >= 0x13F0 && code <= 0x13F5) return [[code + 8, latin]];
  return [];
}

/**
 * What a display name looks like (LookAlikeNames.skeleton in Swift, the same rules): decomposed,
 * invisible characters, marks, spaces and punctuation dropped, letters drawn like a Latin one read as it, then
 * lowercased and read so again, "rn" read as "m" and "vv" as "w", code point by code point (as
 * Swift goes scalar by scalar). Names with one skeleton read alike.
 */
export function nameSkeleton(name) {
  const known = skeletons.get(name);
  if (known !== undefined) return known;
  if (skeletons.size >= 10000) skeletons.clear();  // a bound: names are few, renders many
  const skeleton = readSkeleton(name ?? "");
  skeletons.set(name, skeleton);
  return skeleton;
}

// Punctuation draws little and means less in a name: "Ada Lovelace." reads as "Ada Lovelace".
const PUNCTUATION = /\p{P}/u;

// Names already read (nameSkeleton): a list or a chat reads the same few names at every render.
const skeletons = new Map();

/** The letters the LOOKALIKES table reads as Latin ones, for the fixture both clients are held to (scripts/look-alike-fixture.mjs). */
export const LOOKALIKE_LETTERS = [...LOOKALIKES.keys()];

function readSkeleton(name) {
  const read = (text) => [...text].map((c) => LOOKALIKES.get(c) ?? c);
  const letters = read(read([...name.normalize("NFKD")].filter((c) => !INVISIBLE.test(c) && !PUNCTUATION.test(c)).join("")).join("").toLowerCase());
  const skeleton = [];
  for (const letter of letters) {
    const last = skeleton.at(-1);
    if (last === "r" && letter === "n") skeleton[skeleton.length - 1] = "m";
    else if (last === "v" && letter === "v") skeleton[skeleton.length - 1] = "w";
    else skeleton.push(letter);
  }
  return skeleton.join("");
}

/** An invitation's sender with their username: a stranger may take anyone's name. */
export function inviterName(inviter) {
  return inviter ? `${isolate(inviter.displayName)} (@${inviter.username})` : "Someone";
}

/** The ids of `people` ({userId, displayName}) whose name reads like another one's: they show their @username. */
export function lookAlikes(people) {
  const bySkeleton = new Map();
  for (const person of people) {
    const skeleton = nameSkeleton(person.displayName);
    bySkeleton.set(skeleton, [...(bySkeleton.get(skeleton) ?? []), person.userId]);
  }
  const marked = new Set([...bySkeleton.values()].filter((ids) => ids.length > 1).flat());
  // A colon in a name ("Ada Lovelace: Bob") makes "name: text" read as another writing (LookAlikeNames rule 3).
  for (const person of people) if (COLONS.test(person.displayName ?? "")) marked.add(person.userId);
  return marked;
}

/** ":" and what is drawn like it (LookAlikeNames.colons). */
const COLONS = /[:\uFF1A\uFE55\uFE13\uFE30\u2236\uA789\uA4FD\u02F8\u02D0\u05C3\u0589\u0703\u0704\u1361\u1804\u205A\u2982]/;

/** Whether `text` would be an empty bubble (Validation.isBlankMessageText): a caption like that is none. */
export function isBlank(text) {
  return [...text].every((c) => INVISIBLE.test(c));
}

/** Most code points one character may carry, as the server counts (Validation.maxScalarsPerCharacter). */
export const MAX_CODE_POINTS_PER_CHARACTER = 32;

/** Whether a character of `text` carries more code points than the server takes (a pile of marks). */
export function overloadedCharacter(text) {
  if (!segmenter || [...text].length <= MAX_CODE_POINTS_PER_CHARACTER) return false;
  for (const { segment } of segmenter.segment(text)) if ([...segment].length > MAX_CODE_POINTS_PER_CHARACTER) return true;
  return false;
}

function startOfDay(date) {
  return new Date(date.getFullYear(), date.getMonth(), date.getDate()).getTime();
}

function daysBetween(ms, now) {
  return Math.round((startOfDay(new Date(now)) - startOfDay(new Date(ms))) / 86400000);
}

/** List timestamp: time today, "Yesterday", weekday within a week, date older. */
export function smartTime(ms, now = Date.now()) {
  const date = new Date(ms);
  const days = daysBetween(ms, now);
  if (days <= 0) return clockTime(ms);
  if (days === 1) return "Yesterday";
  if (days < 7) return date.toLocaleDateString([], { weekday: "long" });
  return date.toLocaleDateString([], { year: "numeric", month: "short", day: "numeric" });
}

/** Date separator label: "Today", "Yesterday", weekday within a week, date older. */
export function dayLabel(ms, now = Date.now()) {
  const days = daysBetween(ms, now);
  if (days <= 0) return "Today";
  if (days === 1) return "Yesterday";
  if (days < 7) return new Date(ms).toLocaleDateString([], { weekday: "long" });
  return new Date(ms).toLocaleDateString([], { year: "numeric", month: "long", day: "numeric" });
}

export function dayKey(ms) {
  const d = new Date(ms);
  return `${d.getFullYear()}-${d.getMonth() + 1}-${d.getDate()}`;
}

// "8:21 AM" (no leading zero) or "08:21"/"8:21" as the user's locale writes times.
const timeFormat = new Intl.DateTimeFormat(undefined, { hour: "numeric", minute: "2-digit" });

export function clockTime(ms) {
  return timeFormat.format(new Date(ms));
}

/** Whether a message is only a few emoji (shown large, as chat apps do). */
export function isEmojiOnly(text) {
  const trimmed = text.trim();
  if (!trimmed || !/^[\p{Extended_Pictographic}\p{Emoji_Component}\u200d\ufe0f\s]+$/u.test(trimmed)) return false;
  if (/^[\d#*\s]+$/.test(trimmed)) return false;  // digits are emoji components, not emoji
  return characterCount(trimmed.replace(/\s+/g, "")) <= 3;
}

/** "AL" for "Ada Lovelace", "G" for "grace". */
export function initials(name) {
  const words = name.trim().split(/\s+/).filter(Boolean);
  const letters = words.slice(0, 2).map((w) => [...w][0] ?? "");
  return letters.join("").toUpperCase() || "?";
}

/** A stable avatar colour per user id. */
export function avatarHue(id) {
  let hash = 0;
  for (const c of id) hash = (hash * 31 + c.charCodeAt(0)) >>> 0;
  return hash % 360;
}

/** "online", "last seen today at 14:02", "last seen Yesterday", … */
export function presenceText(presence, now = Date.now()) {
  if (!presence) return "";
  if (presence.online) return "online";
  if (!presence.lastSeenAt) return "offline";
  const days = daysBetween(presence.lastSeenAt, now);
  return days <= 0 ? `last seen today at ${clockTime(presence.lastSeenAt)}` : `last seen ${smartTime(presence.lastSeenAt, now)}`;
}

/** The deterministic id of the direct conversation of two users (as the server derives it). */
export function directConversationId(a, b) {
  return a < b ? `dm_${a}_${b}` : `dm_${b}_${a}`;
}

/** "Ada", "Ada and Grace", "Ada, Grace and Alan". */
/**
 * A name (or title) set inside a sentence as a unit of its own (FSI … PDI): a right-to-left
 * name, or one holding direction overrides, cannot reorder the words around it.
 */
export function isolate(name) {
  return `\u2068${name}\u2069`;
}

export function joinNames(names) {
  if (names.length <= 1) return names[0] ?? "";
  return `${names.slice(0, -1).join(", ")} and ${names[names.length - 1]}`;
}

/** "Ada is typing…", "Ada and Grace are typing…", "3 people are typing…" (empty: nobody). */
export function typingText(names) {
  if (names.length === 0) return "";
  if (names.length === 1) return `${names[0]} is typing…`;
  if (names.length === 2) return `${names[0]} and ${names[1]} are typing…`;
  return `${names.length} people are typing…`;
}

/** Sender name colours: a stable slot of the palette in app.css (.sender-0 … .sender-7) per user id. */
export const SENDER_COLOURS = 8;

export function senderColour(id) {
  return avatarHue(id ?? "") % SENDER_COLOURS;
}

/** "1.2 MB", "340 KB", "12 bytes" (decimal units, as file managers show them). */
export function sizeText(bytes) {
  if (bytes < 1000) return `${bytes} ${bytes === 1 ? "byte" : "bytes"}`;
  const units = ["KB", "MB", "GB", "TB"];
  let value = bytes / 1000, unit = 0;
  while (value >= 1000 && unit < units.length - 1) { value /= 1000; unit++; }
  return `${value >= 100 ? Math.round(value) : Number(value.toFixed(1))} ${units[unit]}`;
}

const KIND_WORDS = { image: ["Photo", "photos", "📷"], video: ["Video", "videos", "🎥"], audio: ["Audio", "audio files", "🎵"] };

/** What a message's files are, in words: "Photo", "3 photos", "Video", "report.pdf", "2 files" (empty: none). */
export function attachmentWords(attachments) {
  if (!attachments?.length) return "";
  const kinds = new Set(attachments.map((a) => a.kind));
  const words = kinds.size === 1 ? KIND_WORDS[attachments[0].kind] : null;
  if (attachments.length === 1) return words ? words[0] : attachments[0].name;
  return `${attachments.length} ${words ? words[1] : "files"}`;
}

/**
 * Message text as drawn. A direction override (U+202D, U+202E) makes what follows it read backwards
 * ("Pay \u202E1234" shows as "Pay 4321", "file \u202Egpj.exe" as "file exe.jpg"): each is drawn as a
 * zero-width space, which keeps the text's length (search highlights count in it). The server refuses
 * them in names and file names; message text keeps them, as sent. Embeddings and isolates stay: they
 * set the direction of a run (right-to-left writers use them) and reverse no letters.
 */
export function shownText(text) {
  return typeof text === "string" ? text.replace(/[\u202D\u202E]/g, "\u200B") : "";
}

/** A message as a list preview or notification shows it: "📷 Photo", "📎 report.pdf", "🎥 the caption". */
export function messagePreview(message) {
  const attachments = message.deletedAt ? null : message.attachments;
  if (!attachments?.length) return shownText(message.text ?? "");
  const kinds = new Set(attachments.map((a) => a.kind));
  const icon = kinds.size === 1 ? (KIND_WORDS[attachments[0].kind]?.[2] ?? "📎") : "📎";
  return `${icon} ${shownText(message.text) || attachmentWords(attachments)}`;
}

/**
 * A file's name as the server keeps it (Attachments.cleanName): no control characters and no
 * invisible or direction-changing ones, so "invoice\u202Egpj.exe" cannot show as "invoiceexe.jpg"
 * in the sender's own tray and message either.
 */
export function safeFileName(name) {
  return (name ?? "").replace(/[\u0000-\u001F\u007F-\u009F\u061C\u180E\u200B\u200C\u200E\u200F\u2028\u2029\u202A-\u202E\u2060-\u2064\u2066-\u2069\uFEFF]/g, "");
}
