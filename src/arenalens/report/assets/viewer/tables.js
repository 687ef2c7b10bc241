// @ts-check
/* Report mode's tables: every buffer (filter by text, or to what is live at the peak or the
 * selected step; sort by any column) and every step's operator with its live bytes. */

import { liveAt, peakStep, stepLabel } from "./arena_data.js";
import { bufferColor } from "./chart.js";
import { element } from "./dom.js";
import { formatBytes, numberText } from "./format.js";
import { currentArena, planOf, relatedToStep, state, update, views } from "./state.js";
import { VirtualTable } from "./virtual_table.js";

/** @typedef {import("./arena_data.js").PreparedArena} PreparedArena */
/** @typedef {import("./dom.js").Panel} Panel */
/** @typedef {import("./virtual_table.js").Column} Column */

/**
 * The buffers the tensor table lists: in the scope chosen, matching the filter text.
 * @param {PreparedArena} prepared
 * @returns {number[]}
 */
function filteredBuffers(prepared) {
  const buffers = prepared.buffers;
  const text = state.filter.toLowerCase();
  /** @type {Set<number> | null} */
  let scope = null;
  const peak = peakStep(prepared);
  if (state.scope === "peak" && peak !== null) scope = new Set(liveAt(prepared, peak));
  if (state.scope === "step" && state.step !== null) scope = new Set(liveAt(prepared, state.step));
  const rows = [];
  for (let position = 0; position < prepared.bufferCount; position++) {
    if (scope && !scope.has(position)) continue;
    if (text) {
      const haystack = (buffers.name[position] + " " + buffers.dtype[position] + " " +
        buffers.shape_label[position] + " " + stepLabel(prepared, buffers.producer[position])).toLowerCase();
      if (!haystack.includes(text)) continue;
    }
    rows.push(position);
  }
  return rows;
}

/** @returns {Column[]} */
function bufferColumns() {
  const buffers = () => currentArena().buffers;
  /** @param {number} position */
  const nameCell = (position) => {
    const swatch = element("span", { class: "swatch" });
    swatch.style.background = bufferColor(position);
    return element("span", { title: buffers().name[position] }, [swatch, buffers().name[position]]);
  };
  return [
    { key: "id", label: "id", width: "44px", numeric: true, optional: true, value: (position) => buffers().id[position] },
    { key: "name", label: "name", width: "minmax(120px, 3fr)", value: (position) => buffers().name[position], render: nameCell },
    // Bytes right after the name; on a phone the optional columns are left out (the details
    // panel shows them for the buffer clicked), so the table fits the screen.
    { key: "size", label: "bytes", width: "84px", numeric: true, value: (position) => buffers().size[position],
      render: (position) => numberText(buffers().size[position]) },
    { key: "shape", label: "shape", width: "minmax(70px, 1fr)", optional: true, value: (position) => buffers().shape_label[position],
      sortValue: (position) => buffers().nbytes[position] },
    { key: "dtype", label: "dtype", width: "64px", optional: true, value: (position) => buffers().dtype[position] },
    { key: "first", label: "steps", width: "72px", numeric: true, optional: true, value: (position) => buffers().first[position],
      render: (position) => buffers().first[position] + "\u2013" + buffers().last[position] },
    { key: "offset", label: "offset", width: "84px", numeric: true, value: (position) => planOf(currentArena()).offsets[position],
      render: (position) => numberText(planOf(currentArena()).offsets[position]) },
    { key: "producer", label: "written by", width: "minmax(90px, 1.3fr)", optional: true,
      value: (position) => stepLabel(currentArena(), buffers().producer[position]),
      sortValue: (position) => buffers().producer[position] ?? -1 },
  ];
}

/**
 * The tensor table with its filter box and scope, in a panel.
 * @param {Panel} tablePanel
 * @param {(position: number) => void} select  a click on a row
 * @returns {VirtualTable}
 */
export function buildTensorTable(tablePanel, select) {
  const search = element("input", { type: "search", id: "tensor-filter", placeholder: "filter by name, op, dtype, shape  ( / )" });
  const scope = element("select", { id: "tensor-scope" }, [
    element("option", { value: "all", text: "all buffers" }),
    element("option", { value: "peak", text: "live at the peak" }),
    element("option", { value: "step", text: "live at the selected step" }),
  ]);
  const count = element("span", { class: "count" });
  tablePanel.body.append(element("div", { class: "table-tools" }, [search, scope, count]));
  const table = new VirtualTable(tablePanel.body, {
    height: 312,
    sortKey: "size",
    sortDirection: -1,
    rows: () => filteredBuffers(currentArena()),
    click: select,
    hover: (position) => update({ hover: position }),
    mark: (position) => {
      if (position === state.selected) return "selected";
      const related = relatedToStep(currentArena());
      return related && related.has(position) ? "related" : "";
    },
    columns: bufferColumns(),
  });
  search.addEventListener("input", () => update({ filter: search.value }));
  scope.addEventListener("change", () => update({ scope: /** @type {"all" | "peak" | "step"} */ (scope.value) }));
  let lastKey = "";
  views.push({ update: () => {
    const key = [state.reportIndex, state.arenaIndex, state.planIndex, state.filter, state.scope,
      state.scope === "step" ? state.step : ""].join("|");
    if (key !== lastKey) {
      lastKey = key;
      table.refresh();
    } else {
      table.paint();
    }
    count.textContent = table.rows.length + " of " + currentArena().bufferCount;
  } });
  return table;
}

/**
 * The operator list: one row per step, with a bar of its live bytes.
 * @param {Panel} operatorsPanel
 * @param {(step: number) => void} selectStep  a click on a row
 * @returns {VirtualTable}
 */
export function buildOperatorTable(operatorsPanel, selectStep) {
  const steps = () => currentArena().steps;
  const table = new VirtualTable(operatorsPanel.body, {
    height: 264,
    sortKey: "step",
    sortDirection: 1,
    rows: () => Array.from({ length: steps().step.length }, (_unused, row) => row),
    click: (row) => selectStep(steps().step[row]),
    mark: (row) => {
      const prepared = currentArena();
      const step = prepared.steps.step[row];
      if (step === state.step) return "selected";
      const selected = state.selected;
      if (selected >= 0 && (prepared.buffers.producer[selected] === step ||
        prepared.buffers.consumers[selected].includes(step))) return "related";
      return "";
    },
    columns: [
      { key: "step", label: "step", width: "40px", numeric: true, value: (row) => steps().step[row] },
      { key: "opcode", label: "operator", width: "minmax(80px, 1fr)", value: (row) => steps().opcode[row],
        render: (row) => steps().label[row] },
      { key: "live", label: "live", width: "110px", numeric: true, value: (row) => steps().live_bytes[row],
        render: (row) => {
          const prepared = currentArena();
          const peak = prepared.peakRow >= 0 ? prepared.steps.live_bytes[prepared.peakRow] : 1;
          const live = prepared.steps.live_bytes[row];
          const bar = element("span", { class: "bar" });
          bar.style.width = Math.round(36 * live / Math.max(peak, 1)) + "px";
          return element("span", null, [bar, " " + formatBytes(live)]);
        } },
    ],
  });
  let lastKey = "";
  views.push({ update: () => {
    const key = state.reportIndex + "|" + state.arenaIndex;
    if (key !== lastKey) {
      lastKey = key;
      table.refresh();
    } else {
      table.paint();
    }
  } });
  return table;
}
