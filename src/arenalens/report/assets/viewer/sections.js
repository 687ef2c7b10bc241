// @ts-check
/* The whole arena: the sections of the number to declare with the plan shown (TFLM: head, setup,
 * tail by part; LiteRT: one per arena), their colours, the budget and board marks drawn across
 * them, and the rows the tooltip shows for a section or part. */

import { reportDocument } from "./arena_data.js";
import { onScale } from "./budget.js";
import { cssColor } from "./dom.js";
import { formatBytes, numberText, percent } from "./format.js";
import { planOf, state } from "./state.js";

/** @typedef {import("./arena_data.js").PreparedArena} PreparedArena */
/** @typedef {import("./document.js").Section} Section */
/** @typedef {import("./document.js").SectionPart} SectionPart */
/** @typedef {import("./tooltip.js").TooltipRow} TooltipRow */

// Persistent data, setup and other arenas: muted colours, apart from the buffers' palette.
const PART_PALETTE = ["#7f8fa6", "#a88ca5", "#8fae8b", "#c4a27a", "#6f9fb0", "#b38a7a",
  "#9a9ccf", "#b9b36f", "#7fb3a1", "#c48fa0", "#8c8c8c", "#a3b6cf"];

/**
 * @param {number} index  a part's position in its section (or a section's among the others)
 * @returns {string}
 */
export function partColor(index) {
  return PART_PALETTE[index % PART_PALETTE.length];
}

/**
 * The sections of the number to declare with the plan shown ([] when the report has none).
 * @param {PreparedArena} prepared
 * @returns {Section[]}
 */
export function shownSections(prepared) {
  return planOf(prepared).sections;
}

/**
 * The section that holds the arena shown, null when the sections do not name it.
 * @param {PreparedArena} prepared
 * @returns {Section | null}
 */
export function arenaSection(prepared) {
  return shownSections(prepared).find((section) => section.name === prepared.arena.name) || null;
}

/**
 * @param {Section[]} sections
 * @returns {number}  the first byte past the last section: the number to declare
 */
export function sectionsEnd(sections) {
  const last = sections[sections.length - 1];
  return last ? last.offset + last.bytes : 0;
}

/**
 * A byte position marked across the whole arena (the budget, the board's largest block).
 * @typedef {object} Mark
 * @property {number} bytes
 * @property {string} label
 * @property {string} color
 * @property {number[]} dash
 * @property {string} key  "budget" | "board"
 */

/**
 * The budget typed or asked for, and the board's largest block when a --target report has a
 * reserve (without one the two are the same line).
 * @param {PreparedArena} prepared
 * @returns {Mark[]}
 */
export function wholeArenaMarks(prepared) {
  /** @type {Mark[]} */
  const marks = [];
  if (state.budget === null) return marks;
  const verdict = prepared.report.verdict;
  const asked = verdict !== null && state.budget === prepared.report.budget;
  const color = cssColor("--budget");
  const block = verdict ? verdict.budget_bytes : null;
  if (asked && verdict && verdict.target && block !== null && (verdict.reserve_bytes || 0) > 0) {
    marks.push({ bytes: block, label: verdict.target + " largest block " + formatBytes(block),
      color, dash: [2, 3], key: "board" });
    marks.push({ bytes: state.budget, label: "after the reserve " + formatBytes(state.budget), color, dash: [6, 4], key: "budget" });
  } else if (asked && verdict && verdict.target) {
    marks.push({ bytes: state.budget, label: verdict.target + " largest block " + formatBytes(state.budget),
      color, dash: [6, 4], key: "budget" });
  } else {
    marks.push({ bytes: state.budget, label: "budget " + formatBytes(state.budget), color, dash: [6, 4], key: "budget" });
  }
  return marks;
}

/**
 * The top of a whole-arena scale: the number to declare or the highest mark (with `near`, only
 * marks near enough not to squash the arena flat).
 * @param {PreparedArena} prepared
 * @param {boolean} [near]
 * @returns {number}
 */
export function wholeArenaTop(prepared, near) {
  const total = sectionsEnd(shownSections(prepared));
  let top = total;
  for (const mark of wholeArenaMarks(prepared)) {
    if (!near || onScale(total, mark.bytes)) top = Math.max(top, mark.bytes);
  }
  return Math.max(1, top);
}

/**
 * What the number to declare is called ("kTensorArenaSize", "LiteRT arenas").
 * @param {PreparedArena} prepared
 * @returns {string}
 */
export function declareSymbol(prepared) {
  return prepared.report.declare ? prepared.report.declare.symbol : "to declare";
}

/**
 * A drawn piece of the whole arena: a section's part, at its place.
 * @typedef {object} Piece
 * @property {Section} section
 * @property {SectionPart | null} part  null: the section has no parts
 * @property {number} low  first byte
 * @property {number} high  first byte past it
 * @property {string} color
 */

/**
 * Every section cut into its parts, at byte positions: the tail's parts from its end downwards
 * in the order TFLM allocates them, any other section's parts upwards from its start.
 * @param {PreparedArena} prepared
 * @returns {Piece[]}
 */
export function wholeArenaPieces(prepared) {
  /** @type {Piece[]} */
  const pieces = [];
  const arenaName = prepared.arena.name;
  shownSections(prepared).forEach((section, sectionIndex) => {
    const downwards = section.name === "tail";
    let cursor = downwards ? section.offset + section.bytes : section.offset;
    if (!section.parts.length) {
      pieces.push({ section, part: null, low: section.offset, high: section.offset + section.bytes,
        color: sectionColor(section, sectionIndex, arenaName, 0) });
      return;
    }
    section.parts.forEach((part, partIndex) => {
      const low = downwards ? cursor - part.bytes : cursor;
      const high = downwards ? cursor : cursor + part.bytes;
      cursor = downwards ? low : high;
      pieces.push({ section, part, low, high, color: sectionColor(section, sectionIndex, arenaName, partIndex) });
    });
  });
  return pieces;
}

/**
 * @param {Section} section
 * @param {number} sectionIndex
 * @param {string} arenaName  the arena shown
 * @param {number} partIndex
 * @returns {string}
 */
function sectionColor(section, sectionIndex, arenaName, partIndex) {
  if (section.name === arenaName) return partIndex === 0 ? cssColor("--accent") : "#9db4cc";
  if (section.name === "setup") return "#c8ccd2";
  if (section.name === "tail") return partColor(partIndex);
  return partColor(sectionIndex + 5);
}

/**
 * @param {Piece} piece
 * @returns {boolean}  a piece of setup's bytes (drawn hatched: free once setup ends)
 */
export function isSetup(piece) {
  return piece.section.name === "setup";
}

/**
 * The tooltip of a piece: the section, the part, their bytes and share, what fills them.
 * @param {PreparedArena} prepared
 * @param {Piece} piece
 * @returns {{ title: string, rows: TooltipRow[] }}
 */
export function pieceTooltip(prepared, piece) {
  const total = sectionsEnd(shownSections(prepared));
  const section = piece.section;
  const part = piece.part;
  const title = part ? section.name + ": " + part.name : section.name;
  /** @type {TooltipRow[]} */
  const rows = [];
  if (part) {
    rows.push(["bytes", numberText(part.bytes) + " B \u00b7 " + formatBytes(part.bytes) + " \u00b7 " +
      percent(part.bytes, total) + " of " + declareSymbol(prepared)]);
    if (part.meaning) rows.push(["what", part.meaning]);
    if (part.category) rows.push(["recorded as", "'" + part.category + "'" + (part.count ? ", " + part.count + " allocations" : "")]);
    else if (part.count) rows.push(["allocations", String(part.count)]);
    part.largest.forEach((item, index) => {
      rows.push([index === 0 ? "largest" : "", item.what + " " + numberText(item.bytes) + " B"]);
    });
  }
  rows.push([section.name, numberText(section.bytes) + " B \u00b7 " + formatBytes(section.bytes) + " \u00b7 " +
    percent(section.bytes, total) + " \u00b7 bytes " + numberText(section.offset) + "\u2013" +
    numberText(section.offset + section.bytes)]);
  if (section.meaning) rows.push(["", section.meaning]);
  return { title, rows };
}

/** @returns {boolean}  the report shown needs bytes only while setup runs (a "setup" section) */
export function hasSetup() {
  return reportDocument.reports[state.reportIndex].arena_sections.some((section) => section.name === "setup");
}

/** @returns {boolean}  the document has sections for the report shown */
export function hasSections() {
  return reportDocument.reports[state.reportIndex].arena_sections.length > 0;
}

// Below this share of the whole scale, an arena drawn to scale is a flat smear: the map then
// starts zoomed into it (the strip above it still shows the whole arena).
const READABLE_SHARE = 0.4;

/**
 * Whether the memory map shows the whole arena: as chosen, or by itself when the arena shown
 * keeps a readable share of the whole scale.
 * @param {PreparedArena} prepared
 * @returns {boolean}
 */
export function mapShowsWhole(prepared) {
  const section = arenaSection(prepared);
  if (!section || shownSections(prepared).length < 2) return false;
  if (state.mapScale !== "auto") return state.mapScale === "whole";
  return section.bytes >= READABLE_SHARE * wholeArenaTop(prepared, true);
}
