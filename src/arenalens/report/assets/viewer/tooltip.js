// @ts-check
/* The tooltip that follows the pointer, and the rows it shows for a buffer (also the details
 * panel's rows). */

import { stepLabel } from "./arena_data.js";
import { element } from "./dom.js";
import { formatBytes, numberText } from "./format.js";
import { planOf } from "./state.js";

/** @typedef {import("./arena_data.js").PreparedArena} PreparedArena */

/** @typedef {[string, string]} TooltipRow  [what, value] */

const tooltip = element("div", { id: "tooltip", role: "tooltip" });
document.body.append(tooltip);

/**
 * Shows a title and rows next to the pointer, kept inside the window.
 * @param {MouseEvent} event
 * @param {string} title
 * @param {TooltipRow[]} rows
 */
export function showTooltip(event, title, rows) {
  tooltip.replaceChildren(element("div", { class: "tt-title", text: title }));
  for (const [key, value] of rows) {
    tooltip.append(element("div", { class: "tt-row" }, [element("span", { text: key }), element("span", { text: value })]));
  }
  tooltip.style.display = "block";
  const padding = 14;
  const width = tooltip.offsetWidth;
  const height = tooltip.offsetHeight;
  let left = event.clientX + padding;
  let top = event.clientY + padding;
  if (left + width > window.innerWidth - 4) left = event.clientX - width - padding;
  if (top + height > window.innerHeight - 4) top = event.clientY - height - padding;
  tooltip.style.left = Math.max(4, left) + "px";
  tooltip.style.top = Math.max(4, top) + "px";
}

export function hideTooltip() {
  tooltip.style.display = "none";
}

/**
 * What a user asks about a buffer: shape, bytes, lifetime, producer, consumers, offset.
 * @param {PreparedArena} prepared
 * @param {number} position  the buffer
 * @param {number | null} planIndex  whose offset to show (null: none)
 * @returns {TooltipRow[]}
 */
export function bufferRows(prepared, position, planIndex) {
  const buffers = prepared.buffers;
  const shape = buffers.shape_label[position];
  const size = buffers.size[position];
  const nbytes = buffers.nbytes[position];
  const consumers = buffers.consumers[position];
  /** @type {TooltipRow[]} */
  const rows = [
    ["shape", buffers.dtype[position] === "-" ? shape : shape + "  " + buffers.dtype[position]],
    ["bytes", numberText(nbytes) + " B" + (size !== nbytes ? " (planned " + numberText(size) + " B)" : "") +
      "  \u00b7 " + formatBytes(size)],
    ["lifetime", "steps " + buffers.first[position] + "\u2013" + buffers.last[position]],
    ["written by", stepLabel(prepared, buffers.producer[position])],
    ["read by", consumers.length ? consumers.map((step) => stepLabel(prepared, step)).join(", ") : "-"],
  ];
  if (planIndex !== null) {
    const view = planOf(prepared, planIndex);
    const offset = view.offsets[position];
    rows.push(["offset", numberText(offset) + " \u2013 " + numberText(offset + size) + " (" + view.planner + ")"]);
  }
  if (buffers.aliases[position].length) rows.push(["shares bytes with", buffers.aliases[position].join(", ")]);
  return rows;
}
