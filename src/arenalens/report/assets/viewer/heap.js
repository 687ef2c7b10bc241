// @ts-check
/* LiteRT's interpreter heap (runtimes/litert/heap.py): per delegate, the parts as one stacked
 * bar and a table (when each is taken, bytes, how sure), then what is live after setup, after
 * the first invoke and at the peak. TFLM pages have none. Every text goes in as textContent. */

import { reportDocument } from "./arena_data.js";
import { element, panel } from "./dom.js";
import { formatBytes, numberText, percent } from "./format.js";
import { state } from "./state.js";

/** @typedef {import("./document.js").InterpreterHeap} InterpreterHeap */

/** @type {Record<string, string>} */
const DELEGATE_LABELS = { xnnpack: "with XNNPACK (LiteRT's default)", none: "builtin kernels only" };
/** @type {Record<string, string>} */
const PHASE_LABELS = { setup: "setup", first_invoke: "first invoke, kept", transient: "first invoke, freed" };
// One colour per phase: what setup holds, what the first invoke keeps, what it frees again.
/** @type {Record<string, string>} */
const PHASE_CLASSES = { setup: "heap-setup", first_invoke: "heap-kept", transient: "heap-freed" };

/**
 * One delegate's heap: a stacked bar of its parts and the table.
 * @param {InterpreterHeap} heap
 * @returns {HTMLElement}
 */
function heapBlock(heap) {
  const parts = heap.parts.filter((part) => part.bytes > 0);
  const bar = element("div", { class: "heap-bar", role: "img",
    "aria-label": "heap parts at the peak, " + numberText(heap.peak_bytes) + " B" });
  for (const part of parts) {
    const piece = element("span", { class: "heap-piece " + (PHASE_CLASSES[part.phase] || ""),
      title: part.name + ": " + numberText(part.bytes) + " B (" + (PHASE_LABELS[part.phase] || part.phase) + ")" });
    piece.style.flexGrow = String(part.bytes);
    bar.append(piece);
  }
  const rows = parts.map((part) => element("tr", { class: "heap-part" }, [
    element("td", { text: part.name, title: part.meaning }),
    element("td", { text: PHASE_LABELS[part.phase] || part.phase }),
    element("td", { text: numberText(part.bytes) + " B" }),
    element("td", { text: percent(part.bytes, heap.peak_bytes) }),
    element("td", { text: part.exact ? "exact" : "estimate" }),
  ]));
  /** @type {[string, number][]} */
  const totals = [["after setup", heap.after_setup_bytes], ["after the first invoke", heap.after_first_invoke_bytes],
    ["peak", heap.peak_bytes]];
  const totalRows = totals.map(([label, bytes]) => element("tr", { class: "heap-total" }, [
    element("th", { text: label }), element("td", null), element("td", { text: numberText(bytes) + " B" }),
    element("td", { text: formatBytes(bytes) }), element("td", null),
  ]));
  const table = element("table", { class: "totals heap-table" }, [
    element("thead", null, [element("tr", null, ["part", "taken", "bytes", "of peak", "how sure"].map((text) =>
      element("th", { text })))]),
    element("tbody", null, [...rows, ...totalRows]),
  ]);
  // The heap's own words (an exact heap's say whether its allowances keep it within 1%).
  const words = heap.estimate || (heap.exact ? "exact" : "estimate");
  const ways = heap.ways || [];
  return element("div", { class: "heap-delegate", "data-delegate": heap.delegate }, [
    element("h3", { text: (DELEGATE_LABELS[heap.delegate] || heap.delegate)
      + (heap.threads > 1 ? ", " + heap.threads + " threads" : "") + ": peak " + formatBytes(heap.peak_bytes) }),
    element("div", { class: "note", text: heap.machine + " \u00b7 " + words }),
    bar,
    element("div", { class: "table-scroll" }, [table]),
    ...(ways.length ? [element("div", { class: "table-scroll" }, [waysTable(ways)])] : []),
    ...heap.notes.map((note) => element("div", { class: "note", text: "Note: " + note })),
  ]);
}

/**
 * Each way a model input picks, with its figures (the table above counts the larger of each).
 * @param {import("./document.js").HeapWay[]} ways
 * @returns {HTMLElement}
 */
function waysTable(ways) {
  const rows = ways.map((way) => element("tr", { class: "heap-way" }, [
    element("td", { text: way.choices.map((choice) => choice.opcode + " at operator " + choice.operator + ": "
      + (choice.opcode === "IF" ? choice.taken + " branch"
        : choice.opcode === "WHILE" ? "body " + choice.taken : "reads " + choice.taken)).join(", ")
      || "every input zeros" }),
    ...[way.after_setup_bytes, way.after_first_invoke_bytes, way.peak_bytes].map((bytes) =>
      element("td", { text: numberText(bytes) + " B" })),
    element("td", { text: (way.exact ? "exact" : "estimate") + (way.zero_inputs ? ", all-zero inputs" : "") }),
  ]));
  return element("table", { class: "totals heap-ways" }, [
    element("thead", null, [element("tr", null, ["if the run takes", "after setup", "after the first invoke",
      "peak", "how sure"].map((text) => element("th", { text })))]),
    element("tbody", null, rows),
  ]);
}

/** @returns {HTMLElement | null}  the heap panel of a LiteRT page; null for TFLM */
export function heapPanel() {
  const report = reportDocument.reports[state.reportIndex];
  const heaps = report.interpreter_heap || [];
  if (!heaps.length) return null;
  const section = panel("LiteRT interpreter heap",
    "what the interpreter holds besides the model file: after setup, after the first invoke, and at its peak");
  section.root.id = "heap";
  const key = element("div", { class: "legend" }, Object.keys(PHASE_CLASSES).map((phase) =>
    element("span", null, [element("span", { class: "heap-swatch " + PHASE_CLASSES[phase] }), PHASE_LABELS[phase]])));
  section.body.append(key, ...heaps.map(heapBlock));
  return section.root;
}
