// @ts-check
/* --max-input: the number to declare against the input height, each size marked fits or not,
 * the largest that fits ringed, the budget as a line. */

import { CanvasChart, MARGIN, drawByteAxis, horizontalLine } from "./chart.js";
import { cssColor, element, panel } from "./dom.js";
import { byteUnit, formatBytes, niceStep } from "./format.js";
import { state, views } from "./state.js";

/** @typedef {import("./document.js").Report} Report */
/** @typedef {import("./document.js").InputSize} InputSize */

/** @typedef {InputSize & { required_bytes: number }} PlannedSize */

class InputChart extends CanvasChart {
  /**
   * @param {HTMLElement} parent
   * @param {Report} report
   */
  constructor(parent, report) {
    super(parent, 220);
    this.report = report;
    this.update();
  }

  update() {
    if (!this.report) return;  // called by the base constructor before report is set
    const context = this.clearedContext();
    const sizes = /** @type {PlannedSize[]} */ (this.report.input_sizes.filter((size) => size.required_bytes !== null));
    if (!sizes.length) return;
    const top = 16;
    const bottom = this.height - 30;
    const room = state.budget;
    const maxBytes = Math.max(...sizes.map((size) => size.required_bytes), room || 0) * 1.08;
    const heights = sizes.map((size) => size.height);
    const span = Math.max(...heights) - Math.min(...heights) || 1;
    const low = Math.max(0, Math.min(...heights) - span * 0.05);
    const high = Math.max(...heights) + span * 0.05;
    /** @param {number} height */
    const xOf = (height) => MARGIN.left + (height - low) / (high - low) * (this.width - MARGIN.left - MARGIN.right);
    /** @param {number} bytes */
    const yOf = (bytes) => bottom - bytes / maxBytes * (bottom - top);
    drawByteAxis(context, this, top, bottom, maxBytes, byteUnit(maxBytes));
    context.fillStyle = cssColor("--muted");
    context.textAlign = "center";
    context.textBaseline = "top";
    const tick = Math.max(1, Math.round(niceStep(high - low, Math.max(2, Math.floor(this.width / 80)))));
    for (let height = Math.ceil(low / tick) * tick; height <= high; height += tick) {
      context.fillText(String(height), xOf(height), bottom + 4);
      context.fillRect(xOf(height), bottom, 1, 3);
    }
    context.fillText("input height (width keeps the aspect ratio)", (MARGIN.left + this.width) / 2, bottom + 16);
    context.strokeStyle = cssColor("--accent");
    context.lineWidth = 1.6;
    context.beginPath();
    sizes.forEach((size, index) => {
      if (index) context.lineTo(xOf(size.height), yOf(size.required_bytes));
      else context.moveTo(xOf(size.height), yOf(size.required_bytes));
    });
    context.stroke();
    for (const size of sizes) {
      context.fillStyle = size.fits ? cssColor("--good") : cssColor("--bad");
      context.beginPath();
      context.arc(xOf(size.height), yOf(size.required_bytes), 3.5, 0, 2 * Math.PI);
      context.fill();
    }
    if (room !== null) {
      horizontalLine(context, this, yOf(room), cssColor("--budget"), [6, 4], "available " + formatBytes(room), "right-below");
    }
    const best = this.report.max_input_shape;
    const match = best ? sizes.find((size) => size.shape.join("x") === best.join("x")) : undefined;
    if (match) {  // a ring around the largest size that fits (the panel's hint names it)
      context.strokeStyle = cssColor("--good");
      context.lineWidth = 2;
      context.beginPath();
      context.arc(xOf(match.height), yOf(match.required_bytes), 7, 0, 2 * Math.PI);
      context.stroke();
    }
    this.canvas.setAttribute("aria-label", "arena against input size");
  }
}

/**
 * @param {Report} report
 * @returns {HTMLElement | null}  the panel, null when the report planned no input sizes
 */
export function inputPanel(report) {
  if (!report.input_sizes.length) return null;
  const best = report.max_input_shape;
  const section = panel("Arena by input size",
    best ? "largest that fits: " + report.max_input_name + "=" + best.join("x") : "no size fits");
  section.root.id = "input-sizes";
  const box = element("div", { class: "chart", id: "input-chart" });
  section.body.append(box);
  views.push(new InputChart(box, report));
  return section.root;
}
