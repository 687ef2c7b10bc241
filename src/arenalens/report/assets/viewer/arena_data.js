// @ts-check
/* The embedded report document, and per (report, arena) the indexes every view needs, made once:
 * step → row, buffers by first step, matching keys, the peak row. */

/** @typedef {import("./document.js").ReportDocument} ReportDocument */
/** @typedef {import("./document.js").Report} Report */
/** @typedef {import("./document.js").Arena} Arena */
/** @typedef {import("./document.js").BufferColumns} BufferColumns */
/** @typedef {import("./document.js").StepColumns} StepColumns */

/** @returns {ReportDocument} */
function readDocument() {
  const block = document.getElementById("arenalens-data");
  if (!block || !block.textContent) throw new Error("arenalens: the page carries no report data");
  return /** @type {ReportDocument} */ (JSON.parse(block.textContent));
}

export const reportDocument = readDocument();

/**
 * One arena of one report, with its indexes.
 * @typedef {object} PreparedArena
 * @property {number} reportIndex
 * @property {number} arenaIndex
 * @property {Report} report
 * @property {Arena} arena
 * @property {BufferColumns} buffers
 * @property {StepColumns} steps
 * @property {number} bufferCount
 * @property {Map<number, number>} stepRow  step → its row in the step columns
 * @property {number} lowStep
 * @property {number} highStep
 * @property {number[]} byFirst  buffer positions by first step (the lifetimes chart's rows)
 * @property {Int32Array} lifetimeRow  buffer position → its row in byFirst
 * @property {string[]} keys  buffer position → the key that matches it across two reports
 * @property {Map<string, number>} keyIndex  matching key → buffer position
 * @property {number} peakRow  the peak step's row, -1 when the arena has no steps
 */

/** @type {Map<string, PreparedArena>} */
const preparedCache = new Map();

/**
 * @param {number} reportIndex
 * @param {number} arenaIndex
 * @returns {PreparedArena}
 */
export function arenaOf(reportIndex, arenaIndex) {
  const cacheKey = reportIndex + ":" + arenaIndex;
  const known = preparedCache.get(cacheKey);
  if (known) return known;
  const report = reportDocument.reports[reportIndex];
  const arena = report.arenas[arenaIndex];
  const buffers = arena.buffers;
  const steps = arena.steps;
  const bufferCount = buffers.id.length;
  /** @type {Map<number, number>} */
  const stepRow = new Map();
  steps.step.forEach((step, row) => stepRow.set(step, row));
  const byFirst = Array.from({ length: bufferCount }, (_unused, position) => position).sort(
    (left, right) => buffers.first[left] - buffers.first[right] ||
      buffers.last[left] - buffers.last[right] || left - right);
  const lifetimeRow = new Int32Array(bufferCount);
  byFirst.forEach((position, row) => { lifetimeRow[position] = row; });
  const peakRow = arena.peak_step === null ? -1 : stepRow.get(arena.peak_step) ?? -1;
  const keys = buffers.key.map((key, position) => key ?? buffers.name[position]);
  const info = {
    reportIndex, arenaIndex, report, arena, buffers, steps, bufferCount, stepRow,
    lowStep: steps.step.length ? steps.step[0] : 0,
    highStep: steps.step.length ? steps.step[steps.step.length - 1] : 0,
    byFirst, lifetimeRow,
    keys,
    keyIndex: new Map(keys.map((key, position) => [key, position])),
    peakRow,
  };
  preparedCache.set(cacheKey, info);
  return info;
}

/**
 * What runs at a step ("op 3 CONV_2D"), "graph input" for no step.
 * @param {PreparedArena} prepared
 * @param {number | null} step
 * @returns {string}
 */
export function stepLabel(prepared, step) {
  if (step === null) return "graph input";
  const row = prepared.stepRow.get(step);
  return row === undefined ? "step " + step : prepared.steps.label[row];
}

/**
 * Positions of the buffers live at a step, largest first (ties by position).
 * @param {PreparedArena} prepared
 * @param {number} step
 * @returns {number[]}
 */
export function liveAt(prepared, step) {
  const buffers = prepared.buffers;
  const live = [];
  for (let position = 0; position < prepared.bufferCount; position++) {
    if (buffers.first[position] <= step && step <= buffers.last[position]) live.push(position);
  }
  return live.sort((left, right) => buffers.size[right] - buffers.size[left] || left - right);
}

/**
 * @param {PreparedArena} prepared
 * @returns {number | null}  the peak step, null for an arena without steps
 */
export function peakStep(prepared) {
  return prepared.peakRow >= 0 ? prepared.steps.step[prepared.peakRow] : null;
}

/**
 * @param {PreparedArena} prepared
 * @returns {number}  bytes live at the peak step (0 without steps)
 */
export function peakBytes(prepared) {
  return prepared.peakRow >= 0 ? prepared.steps.live_bytes[prepared.peakRow] : 0;
}
