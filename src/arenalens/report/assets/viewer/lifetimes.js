// @ts-check
/* Lifetimes: one bar per buffer from the step that writes it to the last that reads it, ordered
 * by first step; a sticky canvas draws only the rows scrolled into view, so 2,000+ buffers stay
 * fast. */

import { peakStep } from "./arena_data.js";
import { CanvasChart, MARGIN, bufferColor, drawStepAxis, stepBand, stepX, xStep } from "./chart.js";
import { cssColor, element } from "./dom.js";
import { fitLabel, formatBytes } from "./format.js";
import { currentArena, relatedToStep, state, stepRange, update } from "./state.js";
import { bufferRows, hideTooltip, showTooltip } from "./tooltip.js";

/** @typedef {import("./arena_data.js").PreparedArena} PreparedArena */

// Characters of a buffer's label beside its bar.
const BAR_LABEL_LIMIT = 36;

export class LifetimeChart {
  /**
   * @param {HTMLElement} parent
   * @param {(position: number) => void} select  a click on a bar selects its buffer
   */
  constructor(parent, select) {
    this.scroller = element("div", { class: "scroller" });
    this.spacer = element("div");
    parent.append(this.scroller);
    this.rowHeight = 16;
    this.chart = new CanvasChart(this.scroller, 320);
    this.scroller.append(this.spacer);
    this.chart.update = () => this.update();
    // Scroll position is cached from scroll events: reading scrollTop while other views write
    // to the DOM would force a layout on every redraw.
    this.scrollTop = 0;
    this.scroller.addEventListener("scroll", () => { this.scrollTop = this.scroller.scrollTop; this.update(); });
    this.canvas = this.chart.canvas;
    this.canvas.addEventListener("mousemove", (event) => this.move(event));
    this.canvas.addEventListener("mouseleave", () => { hideTooltip(); update({ hover: -1, cursor: null }); });
    this.canvas.addEventListener("click", (event) => {
      const position = this.hit(event);
      if (position >= 0) select(position);
    });
  }

  /** @returns {PreparedArena}  the arena shown, with the row height and scroll height set for it */
  layout() {
    const prepared = currentArena();
    const count = prepared.bufferCount;
    this.rowHeight = count <= 60 ? 16 : count <= 400 ? 8 : 5;
    const total = count * this.rowHeight + 30;
    const height = Math.min(Math.max(total, 120), 340);
    if (this.chart.height !== height) {
      this.chart.height = height;
      this.chart.resize();
    }
    this.scroller.style.height = height + "px";
    this.spacer.style.height = Math.max(0, total - height) + "px";
    return prepared;
  }

  /**
   * @param {MouseEvent} event
   * @returns {number}  the buffer whose bar is under the pointer, -1 for none
   */
  hit(event) {
    const prepared = currentArena();
    const [x, y] = this.chart.point(event);
    const row = Math.floor((y - 8 + this.scrollTop) / this.rowHeight);
    if (row < 0 || row >= prepared.bufferCount) return -1;
    const position = prepared.byFirst[row];
    const range = stepRange(prepared);
    const left = stepX(this.chart, range, prepared.buffers.first[position]);
    const right = stepX(this.chart, range, prepared.buffers.last[position] + 1);
    return x >= left - 4 && x <= right + 4 ? position : -1;
  }

  /** @param {MouseEvent} event */
  move(event) {
    const prepared = currentArena();
    const position = this.hit(event);
    const step = xStep(this.chart, stepRange(prepared), this.chart.point(event)[0]);
    update({ hover: position, cursor: step });
    if (position >= 0) showTooltip(event, prepared.buffers.name[position], bufferRows(prepared, position, state.planIndex));
    else hideTooltip();
  }

  /** @param {number} position  scrolls its bar into view */
  scrollToBuffer(position) {
    const prepared = currentArena();
    const y = prepared.lifetimeRow[position] * this.rowHeight;
    const visible = this.chart.height - 30;
    if (y < this.scrollTop || y > this.scrollTop + visible) {
      this.scrollTop = Math.max(0, y - visible / 2);
      this.scroller.scrollTop = this.scrollTop;
    }
  }

  update() {
    const prepared = this.layout();
    const buffers = prepared.buffers;
    const chart = this.chart;
    const context = chart.clearedContext();
    const range = stepRange(prepared);
    const top = 8;
    const bottom = chart.height - 22;
    const scroll = this.scrollTop;
    stepBand(context, chart, range, peakStep(prepared), top, bottom, cssColor("--peak"), 0.08);
    stepBand(context, chart, range, state.step, top, bottom, cssColor("--accent"), 0.14);
    stepBand(context, chart, range, state.cursor, top, bottom, cssColor("--ink"), 0.06);
    const firstRow = Math.max(0, Math.floor(scroll / this.rowHeight));
    const lastRow = Math.min(prepared.bufferCount - 1, Math.ceil((scroll + bottom - top) / this.rowHeight));
    const selection = state.selected;
    const related = relatedToStep(prepared);
    context.save();
    context.beginPath();
    context.rect(MARGIN.left, top, chart.width - MARGIN.left - MARGIN.right, bottom - top);
    context.clip();
    context.textBaseline = "middle";
    for (let row = firstRow; row <= lastRow; row++) {
      const position = prepared.byFirst[row];
      const y = top + row * this.rowHeight - scroll;
      const left = stepX(chart, range, buffers.first[position]);
      const right = stepX(chart, range, buffers.last[position] + 1);
      const dim = (selection >= 0 || related !== null) && position !== selection && !(related && related.has(position));
      context.globalAlpha = dim ? 0.25 : 0.95;
      context.fillStyle = bufferColor(position);
      const barHeight = Math.max(1, this.rowHeight - (this.rowHeight > 6 ? 3 : 1));
      context.fillRect(left, y, Math.max(1.5, right - left), barHeight);
      if (position === selection) {
        context.globalAlpha = 1;
        context.strokeStyle = cssColor("--select");
        context.lineWidth = 2;
        context.strokeRect(left - 1, y - 1, Math.max(1.5, right - left) + 2, barHeight + 2);
      }
      if (this.rowHeight >= 14) {
        context.globalAlpha = dim ? 0.4 : 1;
        context.fillStyle = cssColor("--ink");
        const name = buffers.label[position] || buffers.name[position];
        const label = fitLabel(name, BAR_LABEL_LIMIT) + "  " + formatBytes(buffers.size[position]);
        const width = context.measureText(label).width;
        context.textAlign = "left";
        // Right of the bar, else left of it, else inside it (a bar spanning every step).
        if (right + 6 + width < chart.width - MARGIN.right) context.fillText(label, right + 6, y + barHeight / 2);
        else if (left - 6 - width > MARGIN.left) context.fillText(label, left - 6 - width, y + barHeight / 2);
        else {
          context.fillStyle = "#ffffff";
          context.fillText(label, left + 6, y + barHeight / 2);
        }
      }
    }
    context.restore();
    drawStepAxis(context, chart, range, bottom);
    context.fillStyle = cssColor("--muted");
    context.textAlign = "left";
    context.textBaseline = "top";
    context.fillText(prepared.bufferCount + " buffers", 4, top);
    context.fillText("by first step", 4, top + 14);
    this.canvas.dataset.selected = String(selection);
  }
}
