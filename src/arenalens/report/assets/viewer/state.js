// @ts-check
/* What the user is looking at (model, arena, plan, selection, zoom, budget...), the views that
 * draw it, and the one way to change it: update(patch) redraws every view on the next frame. */

import { arenaOf, reportDocument } from "./arena_data.js";

/** @typedef {import("./arena_data.js").PreparedArena} PreparedArena */
/** @typedef {import("./document.js").Plan} Plan */

/** @typedef {{ update: () => void }} View */

/**
 * @typedef {object} ViewerState
 * @property {"report" | "compare"} mode
 * @property {number} reportIndex
 * @property {number} arenaIndex
 * @property {number} planIndex
 * @property {number} selected  the selected buffer's position, -1 for none
 * @property {number} hover  the buffer under the pointer, -1 for none
 * @property {number | null} step  the selected step
 * @property {number | null} cursor  the step under the pointer
 * @property {[number, number] | null} zoom  the steps shown, null for all
 * @property {number | null} budget  bytes, as typed in the budget box
 * @property {"auto" | "whole" | "arena"} mapScale  the memory map's byte axis: the whole arena
 *   (every section), the arena shown only, or whichever keeps that arena readable
 * @property {string} filter  the tensor table's filter text
 * @property {"all" | "peak" | "step"} scope  which buffers the tensor table lists
 * @property {[number, number]} left  compare mode: [report, plan] on the left
 * @property {[number, number]} right  compare mode: [report, plan] on the right
 * @property {string | null} compareKey  compare mode: the matching key of the selected tensor
 */

/**
 * The plan with the smallest arena other than the first (the right side of compare mode).
 * @param {number} reportIndex
 * @returns {number}
 */
function bestOtherPlan(reportIndex) {
  const plans = reportDocument.reports[reportIndex].arenas[0].plans;
  let best = plans.length > 1 ? 1 : 0;
  for (let planIndex = 1; planIndex < plans.length; planIndex++) {
    if (plans[planIndex].arena_size < plans[best].arena_size) best = planIndex;
  }
  return best;
}

/** @type {ViewerState} */
export const state = {
  mode: "report",
  reportIndex: 0,
  arenaIndex: 0,
  planIndex: 0,
  selected: -1,
  hover: -1,
  step: null,
  cursor: null,
  zoom: null,
  budget: reportDocument.reports[0].budget,
  mapScale: "auto",
  filter: "",
  scope: "all",
  left: [0, 0],
  right: reportDocument.reports.length > 1 ? [1, 0] : [0, bestOtherPlan(0)],
  compareKey: null,
};

/** Every view on the page; the page's builders fill it, rebuild() empties it. @type {View[]} */
export const views = [];

let pendingFrame = 0;

/**
 * Changes the state and redraws every view on the next animation frame.
 * @param {Partial<ViewerState>} patch
 */
export function update(patch) {
  Object.assign(state, patch);
  if (!pendingFrame) {
    pendingFrame = requestAnimationFrame(() => {
      pendingFrame = 0;
      for (const view of views) view.update();
    });
  }
}

/** Redraws every view now. */
export function redrawAll() {
  for (const view of views) view.update();
}

/** @returns {PreparedArena}  the arena shown in report mode */
export function currentArena() {
  return arenaOf(state.reportIndex, state.arenaIndex);
}

/**
 * @param {PreparedArena} prepared
 * @param {number} [planIndex]  the plan shown when omitted
 * @returns {Plan}
 */
export function planOf(prepared, planIndex) {
  return prepared.arena.plans[planIndex === undefined ? state.planIndex : planIndex];
}

/**
 * Buffers related to the selected step (read or written by its operator), null without one.
 * @param {PreparedArena} prepared
 * @returns {Set<number> | null}
 */
export function relatedToStep(prepared) {
  if (state.step === null) return null;
  const row = prepared.stepRow.get(state.step);
  if (row === undefined) return null;
  return new Set([...prepared.steps.reads[row], ...prepared.steps.writes[row]]);
}

// The page is rebuilt on a mode, model or arena switch; builders in other modules ask for it
// through requestRebuild, and main.js registers the one function that does it.
/** @type {() => void} */
let rebuildPage = () => {};

/** @param {() => void} rebuild */
export function setRebuild(rebuild) {
  rebuildPage = rebuild;
}

export function requestRebuild() {
  rebuildPage();
}

/**
 * The step axis shared by the memory map, live bytes and lifetimes: the zoom in report mode.
 * @param {PreparedArena} prepared
 * @returns {[number, number]}
 */
export function stepRange(prepared) {
  if (state.zoom && state.mode === "report") return state.zoom;
  return [prepared.lowStep, prepared.highStep];
}
