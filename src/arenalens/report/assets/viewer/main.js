// @ts-check
/* The page: builds report or compare mode into #app, registers the keys, and exposes read-only
 * hooks for tests and benchmarks (window.arenalens). The entry module: report/html_page.py joins it
 * after the modules it imports. */

import { reportDocument } from "./arena_data.js";
import { buildCompare } from "./compare.js";
import { element } from "./dom.js";
import { formatBytes, percent } from "./format.js";
import { buildReport, clearReportViews, reportViews, selectBuffer } from "./report_mode.js";
import { wholeArenaPieces } from "./sections.js";
import { currentArena, redrawAll, setRebuild, state, update, views } from "./state.js";
import { hideTooltip } from "./tooltip.js";

/** Empties the page and builds the mode shown, drawing every view at once. */
function rebuild() {
  views.length = 0;
  clearReportViews();
  hideTooltip();
  const app = document.getElementById("app");
  if (!app) return;
  app.replaceChildren();
  if (state.mode === "compare") buildCompare(app);
  else buildReport(app);
  const tool = reportDocument.tool ? reportDocument.tool + " \u00b7 " : "";
  app.append(element("footer", {
    text: tool + "report schema " + reportDocument.schema_version + " \u00b7 self-contained page: no network requests.",
  }));
  // First render now, not on the next frame: the cards' text sets their height, so waiting
  // would show empty cards and then move every chart below them.
  redrawAll();
}

/**
 * @typedef {object} TestHooks
 * @property {() => import("./state.js").ViewerState} state  a copy of the state
 * @property {(name: string) => number} find  a buffer's position by name, -1 when absent
 * @property {(position: number) => ({ x: number, y: number } | null)} rectCenter  its rectangle's centre
 * @property {(section: string, part: string) => ({ x: number, y: number } | null)} pieceCenter  a
 *   section's part in the whole-arena strip, null when not drawn
 * @property {(position: number) => void} select
 * @property {() => number} redraw  redraws every view now; the milliseconds it took
 * @property {{ bytes: (value: number) => string, percent: (part: number, whole: number) => string }} format
 */

/** @type {Window & typeof globalThis & { arenalens?: TestHooks }} */
const page = window;
page.arenalens = {
  state: () => JSON.parse(JSON.stringify(state)),
  find: (name) => currentArena().buffers.name.indexOf(name),
  rectCenter: (position) => (reportViews.map ? reportViews.map.center(position) : null),
  pieceCenter: (section, part) => {
    const piece = wholeArenaPieces(currentArena()).find((candidate) =>
      candidate.section.name === section && (candidate.part ? candidate.part.name : "") === part);
    return piece && reportViews.strip ? reportViews.strip.center(piece) : null;
  },
  select: (position) => selectBuffer(position),
  redraw: () => {
    const started = performance.now();
    redrawAll();
    return performance.now() - started;
  },
  // The viewer's own formatting, for tests that compare it with the Python renderers'.
  format: { bytes: formatBytes, percent },
};

// Keys, registered once (the page is rebuilt on every mode or model switch):
// "/" focuses the tensor filter, Escape clears the selection.
document.addEventListener("keydown", (event) => {
  const search = document.getElementById("tensor-filter");
  if (event.key === "/" && search && document.activeElement !== search) {
    event.preventDefault();
    search.focus();
  }
  if (event.key === "Escape") update({ selected: -1, step: null, compareKey: null });
});

setRebuild(rebuild);
rebuild();
