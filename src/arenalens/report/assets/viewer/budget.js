// @ts-check
/* The budget: the box that reads it, and where it falls in an arena (the budget minus what the
 * runtime needs outside that arena with the plan shown). */

import { element } from "./dom.js";
import { formatBytes, numberText, parseSize } from "./format.js";
import { planOf, state, update } from "./state.js";

/** @typedef {import("./arena_data.js").PreparedArena} PreparedArena */

// A line far above the data would squash it flat: one beyond this multiple of the data's top
// stays off the scale, and a note at the top says where it is.
const SCALE_REACH = 1.5;

/**
 * @param {number} dataTop  the highest byte the chart must show
 * @param {number} value  a line's bytes
 * @returns {boolean}  whether the line is drawn to scale (and the axis reaches it)
 */
export function onScale(dataTop, value) {
  return value <= SCALE_REACH * Math.max(1, dataTop);
}

/**
 * Room for this arena under the budget (TFLM: the budget minus tail and setup), null without one.
 * @param {PreparedArena} prepared
 * @returns {number | null}
 */
export function budgetRoom(prepared) {
  if (state.budget === null) return null;
  const view = planOf(prepared);
  return state.budget - (view.declare_bytes - view.arena_size);
}

/**
 * The budget line's label: "budget 96 KiB − 29.24 KiB outside this arena".
 * @param {PreparedArena} prepared
 * @returns {string}
 */
export function budgetLabel(prepared) {
  const view = planOf(prepared);
  const outside = view.declare_bytes - view.arena_size;
  const text = "budget " + formatBytes(state.budget ?? 0);
  return outside ? text + " \u2212 " + formatBytes(outside) + " outside this arena" : text;
}

/**
 * "96 KiB" when that reads back as the same number of bytes, else the exact byte count.
 * @param {number | null} budget
 * @returns {string}
 */
function budgetText(budget) {
  if (budget === null) return "";
  const short = formatBytes(budget);
  return parseSize(short) === budget ? short : String(budget);
}

/**
 * The budget box: reads sizes as the CLI does, echoes the bytes it read or says it cannot.
 * @returns {HTMLElement}
 */
export function budgetInput() {
  const input = element("input", {
    type: "text", id: "budget", placeholder: "e.g. 320KB", size: "10", value: budgetText(state.budget),
    title: "bytes, or 320KB = 320K = 320KiB (1,024 bytes each), 0.5MB",
  });
  const message = element("span", {
    class: "budget-message", id: "budget-message", role: "status", "aria-live": "polite",
  });
  /**
   * @param {string} text
   * @param {number | null} value
   */
  const echo = (text, value) => {
    message.classList.toggle("error", text !== "" && value === null);
    if (text === "") message.textContent = "";
    else if (value === null) message.textContent = "can't read '" + text + "': try 320KB, 0.5MB or 307200";
    else message.textContent = "= " + numberText(value) + " B";
  };
  input.addEventListener("input", () => {
    const text = input.value.trim();
    const value = text === "" ? null : parseSize(text);
    input.classList.toggle("invalid", text !== "" && value === null);
    echo(text, value);
    if (text === "" || value !== null) update({ budget: value });
  });
  return element("label", null, ["budget", input, message]);
}
