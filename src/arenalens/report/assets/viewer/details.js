// @ts-check
/* Report mode's side panels: details of the selected buffer or step (or what is live at the
 * peak when nothing is selected), and the plans of this arena, one row per planner. */

import { liveAt, peakStep, stepLabel } from "./arena_data.js";
import { element } from "./dom.js";
import { fitLabel, formatBytes, numberText, percent } from "./format.js";
import { currentArena, state, update } from "./state.js";
import { bufferRows } from "./tooltip.js";

/** @typedef {import("./arena_data.js").PreparedArena} PreparedArena */

/**
 * A buffer's short label as a button that selects it.
 * @param {PreparedArena} prepared
 * @param {number} position
 * @param {number} limit  characters
 * @param {(position: number) => void} select
 * @returns {HTMLElement}
 */
function bufferLink(prepared, position, limit, select) {
  const name = prepared.buffers.name[position];
  return element("button", {
    class: "link", text: fitLabel(prepared.buffers.label[position] || name, limit), title: name,
    onclick: () => select(position),
  });
}

/**
 * @param {HTMLElement} body
 * @param {(position: number) => void} select  a click on a buffer's name
 */
export function renderDetails(body, select) {
  const prepared = currentArena();
  const buffers = prepared.buffers;
  const position = state.selected;
  body.replaceChildren();
  if (position >= 0) {
    body.append(element("div", { class: "name", id: "details-name", text: buffers.name[position] }));
    const list = element("dl");
    for (const [key, value] of bufferRows(prepared, position, state.planIndex)) {
      list.append(element("dt", { text: key }), element("dd", { text: value }));
    }
    const offsets = element("ul");
    for (const view of prepared.arena.plans) {
      offsets.append(element("li", { text: view.planner + ": " + numberText(view.offsets[position]) }));
    }
    list.append(element("dt", { text: "offset by planner" }), element("dd", null, [offsets]));
    body.append(list);
    return;
  }
  const row = state.step === null ? undefined : prepared.stepRow.get(state.step);
  if (state.step !== null && row !== undefined) {
    body.append(element("div", { class: "name", text: "step " + state.step + ": " + stepLabel(prepared, state.step) }));
    const list = element("dl");
    const live = formatBytes(prepared.steps.live_bytes[row]) + " in " + liveAt(prepared, state.step).length + " buffers";
    list.append(element("dt", { text: "live" }), element("dd", { text: live }));
    for (const [label, items] of /** @type {[string, number[]][]} */ ([["reads", prepared.steps.reads[row]], ["writes", prepared.steps.writes[row]]])) {
      const entries = element("ul");
      for (const item of items) {
        entries.append(element("li", null, [bufferLink(prepared, item, 48, select), " " + formatBytes(buffers.size[item])]));
      }
      list.append(element("dt", { text: label }), element("dd", null, [items.length ? entries : "-"]));
    }
    body.append(list);
    return;
  }
  body.append(element("p", { class: "empty",
    text: "Hover any rectangle, bar or row for details; click to select it in every view. Esc clears." }));
  const peak = peakStep(prepared);
  if (peak !== null) {
    const entries = element("ul");
    for (const item of liveAt(prepared, peak).slice(0, 8)) {
      const share = percent(buffers.size[item], prepared.steps.live_bytes[prepared.peakRow]);
      entries.append(element("li", null, [bufferLink(prepared, item, 44, select), " " + formatBytes(buffers.size[item]) + " (" + share + ")"]));
    }
    body.append(element("dl", null, [element("dt", { text: "live at the peak" }), element("dd", null, [entries])]));
  }
}

/** @param {HTMLElement} body  filled with one row per plan: arena, over the bound, number to declare */
export function renderPlans(body) {
  const prepared = currentArena();
  const table = element("table", { class: "totals" });
  table.append(element("tr", null, [element("th", { text: "planner" }), element("th", { text: "arena" }),
    element("th", { text: "over bound" }), element("th", { text: "declare", title: "the number to declare with this plan" })]));
  prepared.arena.plans.forEach((view, planIndex) => {
    const name = element("button", {
      class: "link", text: view.planner + (view.is_runtime ? " \u2605" : ""), onclick: () => update({ planIndex }),
    });
    table.append(element("tr", null, [element("td", null, [name]), element("td", { text: formatBytes(view.arena_size) }),
      element("td", { text: percent(view.arena_size - view.lower_bound, view.lower_bound) + (view.proven_optimal ? " \u2713" : "") }),
      element("td", { text: formatBytes(view.declare_bytes) })]));
  });
  const report = prepared.report;
  const after = report.runtime === "tflm" ?
    " Any other plan applies after `arenalens optimize " + report.model_argument + " -o optimized.tflite --planner NAME`." : "";
  body.replaceChildren(table, element("p", { class: "count",
    text: "\u2605 the runtime's own planner: what the device does." + after + " \u2713 optimal (proven, or at the lower bound)." }));
}
