// @ts-check
/* Report mode: one arena of one report — toolbar (model, arena, planner, budget), cards, what
 * to do next, and the linked views: memory map, live bytes, lifetimes, tensor table, details,
 * operators, input sizes and plans. Selecting a buffer or step anywhere shows it everywhere. */

import { reportDocument } from "./arena_data.js";
import { budgetInput } from "./budget.js";
import { cannotRunPanel, cards, nextStepsPanel } from "./cards.js";
import { heapPanel } from "./heap.js";
import { PALETTE } from "./chart.js";
import { renderDetails, renderPlans } from "./details.js";
import { cssColor, element, legendKey, panel } from "./dom.js";
import { formatBytes } from "./format.js";
import { inputPanel } from "./input_sizes.js";
import { LifetimeChart } from "./lifetimes.js";
import { LiveChart } from "./live_chart.js";
import { ArenaStrip } from "./arena_strip.js";
import { MemoryMap, mapMaximum, reportHighlight } from "./memory_map.js";
import { modeTabs } from "./modes.js";
import { hasOverlaps } from "./overlap.js";
import {
  arenaSection, declareSymbol, hasSections, hasSetup, mapShowsWhole, sectionsEnd, shownSections, wholeArenaMarks,
  wholeArenaPieces, wholeArenaTop,
} from "./sections.js";
import { currentArena, relatedToStep, requestRebuild, state, stepRange, update, views } from "./state.js";
import { buildOperatorTable, buildTensorTable } from "./tables.js";

/** @typedef {import("./arena_data.js").PreparedArena} PreparedArena */
/** @typedef {import("./virtual_table.js").VirtualTable} VirtualTable */
/** @typedef {import("./memory_map.js").WholeArena} WholeArena */

/**
 * The views that scroll to a selection; null outside report mode (main.js's hooks read the map).
 * @type {{ map: MemoryMap | null, strip: ArenaStrip | null, lifetimes: LifetimeChart | null, tensors: VirtualTable | null, operators: VirtualTable | null }}
 */
export const reportViews = { map: null, strip: null, lifetimes: null, tensors: null, operators: null };

export function clearReportViews() {
  Object.assign(reportViews, { map: null, strip: null, lifetimes: null, tensors: null, operators: null });
}

/**
 * Selects a buffer in every view and scrolls the table and lifetimes to it.
 * @param {number} position
 * @param {boolean} [toggle]  a second click on the selected buffer clears the selection
 */
export function selectBuffer(position, toggle) {
  update({ selected: state.selected === position && toggle ? -1 : position });
  if (position < 0) return;
  if (reportViews.tensors) reportViews.tensors.scrollToIndex(position);
  if (reportViews.lifetimes) reportViews.lifetimes.scrollToBuffer(position);
}

/** @param {number} position */
function toggleBuffer(position) {
  selectBuffer(position, true);
}

/**
 * Selects a step (its operator's reads and writes light up), or clears it on a second click.
 * @param {number} step
 */
function selectStep(step) {
  const prepared = currentArena();
  const row = prepared.stepRow.get(step);
  if (row === undefined) return;
  update({ step: state.step === step ? null : step });
  if (reportViews.operators) reportViews.operators.scrollToIndex(row);
}

/**
 * A view that re-renders only when key() changes: panels with buttons must not be rebuilt on
 * every hover, or a click in progress would land on a removed element.
 * @param {() => string} key
 * @param {() => void} render
 * @returns {import("./state.js").View}
 */
function onChange(key, render) {
  /** @type {string | null} */
  let last = null;
  return { update: () => {
    const now = key();
    if (now !== last) {
      last = now;
      render();
    }
  } };
}

/**
 * Another model or arena: its first plan, nothing selected, no zoom; the page is rebuilt.
 * @param {Partial<import("./state.js").ViewerState>} patch
 */
function switchView(patch) {
  Object.assign(state, { planIndex: 0, selected: -1, hover: -1, step: null, cursor: null, zoom: null, mapScale: "auto" }, patch);
  requestRebuild();
}

/** @returns {HTMLElement} */
function legend() {
  return element("div", { class: "legend" }, [
    hasSections() ? legendKey("", cssColor("--ink"), "the number to declare") : null,
    hasSetup() ? legendKey("hatch", "#9aa1ab", "needed only while setup runs") : null,
    legendKey("", cssColor("--accent"), "arena size"),
    legendKey("dotted", cssColor("--bound"), "lower bound (bytes live at the busiest step)"),
    legendKey("dashed", cssColor("--budget"), hasSections()
      ? "budget (zoomed into one arena: minus what the runtime needs outside it)"
      : "budget, minus what the runtime needs outside this arena"),
    legendKey("band", cssColor("--peak"), "peak step"),
    hasOverlaps(reportDocument)
      ? legendKey("hatch", cssColor("--select"), "output written over the input its operator consumes")
      : null,
  ]);
}

/**
 * The whole arena around the arena shown, when the map shows it.
 * @param {PreparedArena} prepared
 * @returns {WholeArena | null}
 */
function wholeArena(prepared) {
  const section = arenaSection(prepared);
  if (!section || !mapShowsWhole(prepared)) return null;
  return {
    offset: section.offset,
    pieces: wholeArenaPieces(prepared).filter((piece) => piece.section !== section),
    marks: wholeArenaMarks(prepared),
    total: sectionsEnd(shownSections(prepared)),
    symbol: declareSymbol(prepared),
  };
}

/** @returns {HTMLElement}  the map's byte axis: the whole arena, or the arena shown only */
function scaleSwitch() {
  const whole = element("button", { id: "scale-whole", onclick: () => update({ mapScale: "whole" }),
    text: "whole " + declareSymbol(currentArena()) });
  const only = element("button", { id: "scale-arena", onclick: () => update({ mapScale: "arena" }),
    text: currentArena().arena.name + " only" });
  views.push({ update: () => {
    const shows = mapShowsWhole(currentArena());
    whole.setAttribute("aria-pressed", String(shows));
    only.setAttribute("aria-pressed", String(!shows));
  } });
  return element("div", { class: "segmented", id: "map-scale", role: "group", "aria-label": "memory map scale" }, [whole, only]);
}

/**
 * @param {PreparedArena} prepared
 * @returns {HTMLElement}
 */
function toolbar(prepared) {
  const bar = element("div", { class: "toolbar" });
  bar.append(modeTabs());
  if (reportDocument.reports.length > 1) {
    const select = element("select", { id: "model-select" });
    select.addEventListener("change", () => switchView({ reportIndex: Number(select.value), arenaIndex: 0 }));
    reportDocument.reports.forEach((report, index) => select.append(element("option", { value: String(index), text: report.model })));
    select.value = String(state.reportIndex);
    bar.append(element("label", null, ["model", select]));
  }
  if (prepared.report.arenas.length > 1) {
    const select = element("select", { id: "arena-select" });
    select.addEventListener("change", () => switchView({ arenaIndex: Number(select.value) }));
    prepared.report.arenas.forEach((arena, index) => select.append(element("option", { value: String(index), text: arena.name })));
    select.value = String(state.arenaIndex);
    bar.append(element("label", null, ["arena", select]));
  }
  const planners = element("div", { class: "segmented", id: "planners", role: "group", "aria-label": "planner" });
  prepared.arena.plans.forEach((view, planIndex) => {
    const label = view.planner + (view.is_runtime ? " \u2605" : "");
    const size = element("span", { class: "size", text: formatBytes(view.arena_size) });
    planners.append(element("button", {
      dataset: { planner: view.planner }, onclick: () => update({ planIndex }),
      title: view.is_runtime ? "the runtime's own planner" : "",
    }, [label, size]));
  });
  views.push({ update: () => planners.querySelectorAll("button").forEach(
    (button, planIndex) => button.setAttribute("aria-pressed", String(planIndex === state.planIndex))) });
  bar.append(element("label", null, ["planner", planners]));
  bar.append(budgetInput());
  return bar;
}

/** @param {HTMLElement} app  filled with report mode's views */
export function buildReport(app) {
  app.append(toolbar(currentArena()), cards());
  const refused = cannotRunPanel();
  if (refused) app.append(refused);
  const guidance = nextStepsPanel();
  if (guidance) app.append(guidance);
  const heap = heapPanel();
  if (heap) app.append(heap);
  const left = element("div", { class: "stack" });
  const right = element("div", { class: "stack" });
  const grid = element("div", { class: "grid" }, [left, right]);
  if (refused) {
    // Its bytes are moot: the plan stays one click away, out of the way of the reasons.
    app.append(element("details", { class: "moot", id: "plan-details" }, [
      element("summary", { text: "The plan as it would be if the runtime could set the model up (its bytes are moot)" }),
      grid,
    ]));
  } else {
    app.append(grid);
  }

  const mapPanel = panel("Memory map", "offset \u00d7 step; hover for details, click to select");
  left.append(mapPanel.root);
  if (hasSections()) {
    mapPanel.head.append(scaleSwitch());
    const stripBox = element("div", { class: "chart strip" });
    mapPanel.body.append(stripBox);
    reportViews.strip = new ArenaStrip(stripBox, (piece) =>
      update({ mapScale: piece.section.name === currentArena().arena.name ? "arena" : "whole" }));
    views.push(reportViews.strip);
  }
  const mapBox = element("div", { class: "chart", id: "memory-map" });
  mapPanel.body.append(mapBox, legend());
  reportViews.map = new MemoryMap(mapBox, 380, () => {
    const prepared = currentArena();
    const whole = wholeArena(prepared);
    return {
      prepared, planIndex: state.planIndex, range: stepRange(prepared),
      maxBytes: whole ? wholeArenaTop(prepared, true) * 1.04 : mapMaximum(prepared, [state.planIndex]),
      highlight: reportHighlight(relatedToStep(prepared)), hovered: state.hover, whole,
    };
  }, {
    hover: (position, step) => update({ hover: position, cursor: step }),
    click: (position) => {
      if (position >= 0) toggleBuffer(position);
      else update({ selected: -1 });
    },
  });
  views.push(reportViews.map);

  const livePanel = panel("Live bytes per step", "drag to zoom into steps, click a step to select its operator");
  const reset = element("button", { class: "small", text: "reset zoom", onclick: () => update({ zoom: null }) });
  livePanel.head.append(reset);
  left.append(livePanel.root);
  const liveBox = element("div", { class: "chart", id: "live-bytes" });
  livePanel.body.append(liveBox);
  views.push(new LiveChart(liveBox, 200, () => {
    const prepared = currentArena();
    return {
      series: [{ prepared, planIndex: state.planIndex, color: PALETTE[0], label: "" }], range: stepRange(prepared),
      maxBytes: mapMaximum(prepared, [state.planIndex]),
      selected: state.selected >= 0 ? { prepared, position: state.selected } : null,
    };
  }, {
    cursor: (step) => update({ cursor: step }),
    click: selectStep,
    zoom: (range) => update({ zoom: range }),
  }));
  views.push({ update: () => { reset.style.visibility = state.zoom ? "visible" : "hidden"; } });

  const lifePanel = panel("Lifetimes", "one bar per buffer, from the step that writes it to the last that reads it");
  left.append(lifePanel.root);
  const lifeBox = element("div", { class: "chart", id: "lifetimes" });
  lifePanel.body.append(lifeBox);
  reportViews.lifetimes = new LifetimeChart(lifeBox, toggleBuffer);
  views.push(reportViews.lifetimes);

  const tablePanel = panel("Tensors", "");
  left.append(tablePanel.root);
  reportViews.tensors = buildTensorTable(tablePanel, toggleBuffer);

  const details = panel("Details", "");
  details.root.classList.add("details");
  details.root.id = "details";
  right.append(details.root);
  views.push(onChange(() => [state.reportIndex, state.arenaIndex, state.planIndex, state.selected, state.step].join("|"),
    () => renderDetails(details.body, (position) => selectBuffer(position))));

  const operators = panel("Operators", "click to see what it reads and writes");
  operators.root.id = "ops";
  right.append(operators.root);
  reportViews.operators = buildOperatorTable(operators, selectStep);

  const sizes = inputPanel(reportDocument.reports[state.reportIndex]);
  if (sizes) right.append(sizes);

  const plansPanel = panel("Plans", "arena per planner for this model");
  right.append(plansPanel.root);
  views.push(onChange(() => [state.reportIndex, state.arenaIndex, state.planIndex].join("|"), () => renderPlans(plansPanel.body)));
}
