// @ts-check
/* Compare mode: two (model, plan) views side by side — where the bytes went (totals and why),
 * both memory maps and live bytes on one scale, and every tensor matched by name, largest
 * change first. Clicking a tensor on either side selects it on both. */

import { arenaOf, peakBytes, reportDocument } from "./arena_data.js";
import { budgetInput } from "./budget.js";
import { PALETTE } from "./chart.js";
import { element, legendKey, panel } from "./dom.js";
import { formatBytes, numberText, signedBytes } from "./format.js";
import { LiveChart } from "./live_chart.js";
import { MemoryMap, mapMaximum } from "./memory_map.js";
import { modeTabs } from "./modes.js";
import { planOf, requestRebuild, state, update, views } from "./state.js";
import { VirtualTable } from "./virtual_table.js";

/** @typedef {import("./arena_data.js").PreparedArena} PreparedArena */
/** @typedef {import("./virtual_table.js").Column} Column */

/**
 * One side: the primary arena of a report, and the plan shown.
 * @typedef {object} Side
 * @property {PreparedArena} prepared
 * @property {number} planIndex
 * @property {"left" | "right"} name
 */

/** @typedef {"bytes" | "offset" | "first" | "steps"} SideField */

/**
 * @param {HTMLSelectElement} select  filled with every (report, plan) pair
 * @param {[number, number]} chosen
 */
function viewOptions(select, chosen) {
  reportDocument.reports.forEach((report, reportIndex) => {
    report.arenas[0].plans.forEach((view, planIndex) => {
      select.append(element("option", {
        value: reportIndex + ":" + planIndex,
        text: report.model + " \u00b7 " + view.planner + " (" + formatBytes(view.arena_size) + ")",
      }));
    });
  });
  select.value = chosen[0] + ":" + chosen[1];
}

/**
 * @param {Side} left
 * @param {Side} right
 * @returns {string}  the arena's change split into the bound's change and the packing's
 */
function explainDiff(left, right) {
  const arenaDelta = planOf(right.prepared, right.planIndex).arena_size - planOf(left.prepared, left.planIndex).arena_size;
  const boundDelta = right.prepared.arena.lower_bound - left.prepared.arena.lower_bound;
  const layoutDelta = arenaDelta - boundDelta;
  if (arenaDelta === 0) return "Both views need the same arena.";
  /** @param {number} delta */
  const amount = (delta) => (delta === 0 ? "0 B" : signedBytes(delta));
  return "The arena changes by " + amount(arenaDelta) + ": " + amount(boundDelta) +
    " from what is live at the busiest step (the lower bound), " + amount(layoutDelta) +
    " from how the planner packs it (fragmentation).";
}

/**
 * @param {Side} left
 * @param {Side} right
 * @returns {HTMLElement}  the totals table: left, right and the change
 */
function totalsTable(left, right) {
  const leftPlan = planOf(left.prepared, left.planIndex);
  const rightPlan = planOf(right.prepared, right.planIndex);
  /** @type {[string, number, number, boolean][]} label, left, right, whether a count (not bytes) */
  const rows = [
    ["arena", leftPlan.arena_size, rightPlan.arena_size, false],
    ["lower bound", left.prepared.arena.lower_bound, right.prepared.arena.lower_bound, false],
    ["without reuse", left.prepared.arena.no_reuse_bytes, right.prepared.arena.no_reuse_bytes, false],
    ["peak live", peakBytes(left.prepared), peakBytes(right.prepared), false],
    ["required", leftPlan.arena_size + left.prepared.arena.other_bytes,
      rightPlan.arena_size + right.prepared.arena.other_bytes, false],
    ["buffers", left.prepared.bufferCount, right.prepared.bufferCount, true],
    ["steps", left.prepared.steps.step.length, right.prepared.steps.step.length, true],
  ];
  const table = element("table", { class: "totals", id: "compare-totals" });
  table.append(element("tr", null, [element("th", { text: "" }), element("th", { text: "left" }),
    element("th", { text: "right" }), element("th", { text: "change" })]));
  for (const [label, leftValue, rightValue, count] of rows) {
    const delta = rightValue - leftValue;
    table.append(element("tr", null, [
      element("td", { text: label }),
      element("td", { text: count ? String(leftValue) : formatBytes(leftValue) }),
      element("td", { text: count ? String(rightValue) : formatBytes(rightValue) }),
      element("td", { class: delta > 0 ? "plus" : delta < 0 ? "minus" : "",
        text: count ? (delta > 0 ? "+" : "") + delta : signedBytes(delta) }),
    ]));
  }
  return table;
}

/**
 * @param {Side} side
 * @param {string} key
 * @param {SideField} field
 * @returns {number | string | null}  null when the tensor is not on this side
 */
function sideValue(side, key, field) {
  const position = side.prepared.keyIndex.get(key);
  if (position === undefined) return null;
  const buffers = side.prepared.buffers;
  if (field === "bytes") return buffers.size[position];
  if (field === "offset") return planOf(side.prepared, side.planIndex).offsets[position];
  if (field === "first") return buffers.first[position];
  return buffers.first[position] + "\u2013" + buffers.last[position];
}

/**
 * Every tensor of either side, matched by key, with its bytes, offset and steps on each side.
 * @param {HTMLElement} parent
 * @param {Side} left
 * @param {Side} right
 * @returns {{ table: VirtualTable, keys: string[] }}
 */
function changesTable(parent, left, right) {
  const keys = [...left.prepared.keys];
  const seen = new Set(keys);
  for (const key of right.prepared.keys) if (!seen.has(key)) keys.push(key);
  /** @param {number} row */
  const change = (row) => Number(sideValue(right, keys[row], "bytes") || 0) - Number(sideValue(left, keys[row], "bytes") || 0);
  /** @param {number} row */
  const moved = (row) => {
    const before = sideValue(left, keys[row], "offset");
    const after = sideValue(right, keys[row], "offset");
    return before === null || after === null ? 0 : Number(after) - Number(before);
  };
  // "left bytes" / "right bytes" style column pairs; a tensor missing on a side shows "-".
  /**
   * @param {SideField} field
   * @param {string} label
   * @param {string} width
   * @param {(value: number | string) => string} format
   * @param {SideField} [sortField]
   * @returns {Column[]}
   */
  const sideColumns = (field, label, width, format, sortField) => [left, right].map((side) => ({
    key: side.name + field, label: side.name + " " + label, width, numeric: true,
    value: (/** @type {number} */ row) => sideValue(side, keys[row], sortField || field) ?? -1,
    render: (/** @type {number} */ row) => {
      const value = sideValue(side, keys[row], field);
      return value === null ? "-" : format(value);
    },
  }));
  const table = new VirtualTable(parent, {
    height: 300,
    sortKey: "change",
    sortDirection: -1,
    rows: () => keys.map((_unused, row) => row),
    click: (row) => update({ compareKey: state.compareKey === keys[row] ? null : keys[row] }),
    mark: (row) => (keys[row] === state.compareKey ? "selected" : ""),
    columns: [
      { key: "name", label: "name", width: "minmax(160px, 3fr)", value: (row) => keys[row] },
      ...sideColumns("bytes", "bytes", "90px", (value) => formatBytes(Number(value))),
      { key: "change", label: "change", width: "90px", numeric: true, value: (row) => Math.abs(change(row)),
        // Largest byte change first; among equal ones, the tensor that moved farthest.
        compare: (first, second) => Math.abs(change(first)) - Math.abs(change(second)) ||
          Math.abs(moved(first)) - Math.abs(moved(second)),
        render: (row) => {
          const delta = change(row);
          return element("span", { class: delta > 0 ? "plus" : delta < 0 ? "minus" : "", text: signedBytes(delta) });
        } },
      ...sideColumns("offset", "offset", "90px", (value) => numberText(Number(value))),
      ...sideColumns("steps", "steps", "76px", (value) => String(value), "first"),
    ],
  });
  return { table, keys };
}

/** @param {HTMLElement} app  filled with compare mode's views */
export function buildCompare(app) {
  const leftSelect = element("select", { id: "compare-left" });
  const rightSelect = element("select", { id: "compare-right" });
  viewOptions(leftSelect, state.left);
  viewOptions(rightSelect, state.right);
  /**
   * @param {HTMLSelectElement} select
   * @param {"left" | "right"} side
   */
  const pick = (select, side) => select.addEventListener("change", () => {
    const [reportIndex, planIndex] = select.value.split(":").map(Number);
    state[side] = [reportIndex, planIndex];
    state.compareKey = null;
    requestRebuild();
  });
  pick(leftSelect, "left");
  pick(rightSelect, "right");
  app.append(element("div", { class: "toolbar" }, [modeTabs(), element("label", null, ["left", leftSelect]),
    element("label", null, ["right", rightSelect]), budgetInput()]));

  /** @type {Side} */
  const left = { prepared: arenaOf(state.left[0], 0), planIndex: state.left[1], name: "left" };
  /** @type {Side} */
  const right = { prepared: arenaOf(state.right[0], 0), planIndex: state.right[1], name: "right" };
  const totalsPanel = panel("Where the bytes went", "left \u2192 right");
  const top = element("div", { class: "compare-top" });
  app.append(top);
  top.append(totalsPanel.root);
  totalsPanel.body.append(totalsTable(left, right), element("p", { class: "count", text: explainDiff(left, right) }));

  const maps = element("div", { class: "compare-maps" });
  app.append(maps);
  // One byte scale and one step axis for both maps, so sizes and positions compare by eye.
  const maxBytes = Math.max(mapMaximum(left.prepared, [left.planIndex]), mapMaximum(right.prepared, [right.planIndex]));
  /** @type {[number, number]} */
  const sharedRange = [Math.min(left.prepared.lowStep, right.prepared.lowStep),
    Math.max(left.prepared.highStep, right.prepared.highStep)];
  /** @type {{ table: VirtualTable, keys: string[] } | null} */
  let changes = null;
  for (const side of [left, right]) {
    const view = planOf(side.prepared, side.planIndex);
    const mapPanel = panel(side.name + ": " + side.prepared.report.model + " \u00b7 " + view.planner, formatBytes(view.arena_size));
    maps.append(mapPanel.root);
    const box = element("div", { class: "chart", id: "compare-map-" + side.name });
    mapPanel.body.append(box);
    const keys = side.prepared.keys;
    views.push(new MemoryMap(box, 320, () => ({
      prepared: side.prepared, planIndex: side.planIndex, range: sharedRange, maxBytes,
      highlight: (position) => (state.compareKey === null ? "" : keys[position] === state.compareKey ? "selected" : "dim"),
    }), {
      hover: () => {},
      click: (position) => {
        state.compareKey = position >= 0 && keys[position] !== state.compareKey ? keys[position] : null;
        update({});
        if (changes && state.compareKey !== null) changes.table.scrollToIndex(changes.keys.indexOf(state.compareKey));
      },
    }));
  }

  const livePanel = panel("Live bytes per step", "left and right on one scale");
  top.append(livePanel.root);
  const liveBox = element("div", { class: "chart", id: "compare-live" });
  livePanel.body.append(liveBox, element("div", { class: "legend" }, [
    legendKey("", PALETTE[0], "left: " + left.prepared.report.model + " \u00b7 " + planOf(left.prepared, left.planIndex).planner),
    legendKey("dashed", PALETTE[1], "right: " + right.prepared.report.model + " \u00b7 " + planOf(right.prepared, right.planIndex).planner),
  ]));
  views.push(new LiveChart(liveBox, 220, () => ({
    series: [
      { prepared: left.prepared, planIndex: left.planIndex, color: PALETTE[0], label: "left" },
      { prepared: right.prepared, planIndex: right.planIndex, color: PALETTE[1], label: "right", dash: [6, 3] },
    ],
    range: sharedRange,
    maxBytes: Math.max(peakBytes(left.prepared), peakBytes(right.prepared), 1) * 1.08,
    selected: null,
  }), {}));

  const changePanel = panel("Tensors, largest change first", "matched by name");
  app.append(changePanel.root);
  changes = changesTable(changePanel.body, left, right);
  changes.table.refresh();
  const table = changes.table;
  views.push({ update: () => table.paint() });
}
