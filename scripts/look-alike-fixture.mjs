#!/usr/bin/env node
// Writes Tests/ParleyCoreTests/look-alike-names.json: [name, skeleton] pairs from the web client's
// nameSkeleton (Public/js/format.js). LookAlikeNamesTests holds Swift's LookAlikeNames to them and
// checks that every letter of Swift's look-alike table is among them; test_web_hostile_round4.py
// holds the page to them. Run it after changing either table (both must change together).
//   scripts/look-alike-fixture.mjs
import { writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { LOOKALIKE_LETTERS, nameSkeleton } from "../Public/js/format.js";

const names = [
  "Ada Lovelace", "Аda Lovelace", "Ada\u200b Lovelace", "ADA LOVELACE", "Ａｄａ Ｌｏｖｅｌａｃｅ", "Ada Lovelacé", "Ada Lovelace\u0301",
  "Ada Iovelace", "Αda Lονelace", "𝐀𝐝𝐚 𝐋𝐨𝐯𝐞𝐥𝐚𝐜𝐞", "Ada\u3164Lovelace", "Rnorn", "rn\u0903", "vv\u{1F3FB}", "Vvill", "B0B", "ΣΟΣ ΟΔΟΣ", "σοσ",
  "Yοu", "ALICE", "Alice", "WILL", "Иван Петров", "李雷", "محمد", "José Ñúñez", "Łódź", "Straße", "ẞ", "ﬁnn", "Ⅻ", "①②", "ǅ", "İstanbul",
  "Ǆ", "Ꝺ", "Ada Loѵelace", "ᴀᴅᴀ ʟᴏᴠᴇʟᴀᴄᴇ", "Ada ᒪovelace", "Ada Lo∨elace", "ᎪᎠᎪ ᏞᏙᎬᏞᎪᏟᎬ", "Ada Ⳑovelace", "ɑda Lovelace", "⍺da Lovelace",
  "ꓮda ꓡovelace", "Ada Lovelace\uFFFC", "L०ve၀",
  "Ada Lovєlace", "Ada Lovҽlace", "Ada L૦velace", "Ada L౦velace", "Ada L٥velace", "Aᑯa Lovelace", "Ada Lov℮lace", "Ada Lovꬲlace",
  "Ada Lovelacə", "ꭺda Lovelace", "Ada Lovelace.", "Ada Lovelace·", "Ada Lovelace\u2024", "Ada-Lovelace", "Jo (she/her)", "J. R. R. Tolkien",
  ...LOOKALIKE_LETTERS.map((letter) => `x${letter}x`),  // every letter of the table, in a name
];
const fixture = fileURLToPath(new URL("../Tests/ParleyCoreTests/look-alike-names.json", import.meta.url));
writeFileSync(fixture, "[\n" + names.map((name) => " " + JSON.stringify([name, nameSkeleton(name)])).join(",\n") + "\n]\n");
console.log(`${names.length} names written to ${fixture}`);
