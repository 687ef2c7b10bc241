// @ts-check
/* Live bytes per step: one series (report mode, with the arena, bound, budget and peak marked)
 * or two on one scale (compare mode). Dragging across steps zooms every view. */

import { peakStep, stepLabel } from "./arena_data.js";
import { budgetLabel, budgetRoom } from "./budget.js";
import {
  CanvasChart, MARGIN, bufferColor, drawByteAxis, drawStepAxis, haloText, horizontalLine, offScaleNote, stepBand,
  stepX, xStep,
} from "./chart.js";
import { cssColor } from "./dom.js";
import { byteUnit, formatBytes, numberText } from "./format.js";
import { planOf, state } from "./state.js";
import { hideTooltip, showTooltip } from "./tooltip.js";

/** @typedef {import("./arena_data.js").PreparedArena} PreparedArena */

/**
 * @typedef {object} Series
 * @property {PreparedArena} prepared
 * @property {number} planIndex
 * @property {string} color
 * @property {string} label  "left" / "right" in compare mode
 * @property {number[]} [dash]
 */

/**
 * @typedef {object} LiveSource
 * @property {Series[]} series
 * @property {[number, number]} range
 * @property {number} maxBytes
 * @property {{ prepared: PreparedArena, position: number } | null} selected  its lifetime is shaded
 */

/**
 * @typedef {object} LiveHandlers
 * @property {(step: number | null) => void} [cursor]
 * @property {(step: number) => void} [click]
 * @property {(range: [number, number]) => void} [zoom]
 */

export class LiveChart extends CanvasChart {
  /**
   * @param {HTMLElement} parent
   * @param {number} height
   * @param {() => LiveSource} source
   * @param {LiveHandlers} handlers
   */
  constructor(parent, height, source, handlers) {
    super(parent, height);
    this.source = source;
    this.handlers = handlers;
    /** @type {{ from: number, to: number | null } | null} */
    this.drag = null;
    this.canvas.addEventListener("mousemove", (event) => this.move(event));
    this.canvas.addEventListener("mouseleave", () => {
      hideTooltip();
      if (this.handlers.cursor) this.handlers.cursor(null);
    });
    this.canvas.addEventListener("mousedown", (event) => {
      if (!this.handlers.zoom) return;
      this.drag = { from: xStep(this, this.source().range, this.point(event)[0]), to: null };
    });
    window.addEventListener("mouseup", (event) => this.release(event));
  }

  /** @param {MouseEvent} event */
  release(event) {
    if (!this.drag) return;
    const drag = this.drag;
    this.drag = null;
    const range = this.source().range;
    if (drag.to !== null && Math.abs(drag.to - drag.from) >= 2 && this.handlers.zoom) {
      this.handlers.zoom([Math.max(Math.min(drag.from, drag.to), range[0]),
        Math.min(Math.max(drag.from, drag.to), range[1])]);
    } else if (event.target === this.canvas && this.handlers.click) {
      this.handlers.click(drag.from);
    }
    this.update();
  }

  /** @param {MouseEvent} event */
  move(event) {
    const info = this.source();
    const step = xStep(this, info.range, this.point(event)[0]);
    if (this.drag) {
      this.drag.to = step;
      this.update();
      return;
    }
    if (this.handlers.cursor) this.handlers.cursor(step);
    /** @type {import("./tooltip.js").TooltipRow[]} */
    const rows = [];
    for (const series of info.series) {
      const row = series.prepared.stepRow.get(step);
      if (row === undefined) continue;
      const prefix = info.series.length > 1 ? series.label + ": " : "";
      const live = series.prepared.steps.live_bytes[row];
      rows.push([prefix + "live", formatBytes(live) + " (" + numberText(live) + " B)"]);
      rows.push([prefix + "runs", stepLabel(series.prepared, step)]);
    }
    if (rows.length) showTooltip(event, "step " + step, rows);
    else hideTooltip();
  }

  update() {
    if (!this.source) return;  // called by the base constructor before source is set
    const info = this.source();
    const context = this.clearedContext();
    const top = 16;
    const bottom = this.height - 26;
    const range = info.range;
    /** @param {number} bytes */
    const yOf = (bytes) => bottom - bytes / info.maxBytes * (bottom - top);
    drawByteAxis(context, this, top, bottom, info.maxBytes, byteUnit(info.maxBytes));
    drawStepAxis(context, this, range, bottom);
    const first = info.series[0];
    const peak = peakStep(first.prepared);
    stepBand(context, this, range, peak, top, bottom, cssColor("--peak"), 0.08);
    if (info.selected) {
      const { prepared, position } = info.selected;
      context.save();
      context.globalAlpha = 0.18;
      context.fillStyle = bufferColor(position);
      const left = stepX(this, range, prepared.buffers.first[position]);
      context.fillRect(left, top, stepX(this, range, prepared.buffers.last[position] + 1) - left, bottom - top);
      context.restore();
    }
    if (state.mode === "report") {
      stepBand(context, this, range, state.step, top, bottom, cssColor("--accent"), 0.14);
      stepBand(context, this, range, state.cursor, top, bottom, cssColor("--ink"), 0.07);
    }
    for (const series of info.series) this.drawSeries(context, info, series, yOf, bottom);
    if (info.series.length === 1) {
      const prepared = first.prepared;
      const view = planOf(prepared, first.planIndex);
      const arena = prepared.arena;
      horizontalLine(context, this, yOf(view.arena_size), cssColor("--accent"), [], "arena " + formatBytes(view.arena_size));
      horizontalLine(context, this, yOf(arena.lower_bound), cssColor("--bound"), [2, 3],
        arena.lower_bound === view.arena_size ? "" : "lower bound " + formatBytes(arena.lower_bound), "left-above");
      const room = budgetRoom(prepared);
      if (room !== null && room > info.maxBytes) {
        offScaleNote(context, this, top, budgetLabel(prepared) + " = " + formatBytes(room), cssColor("--budget"));
      } else if (room !== null) {
        horizontalLine(context, this, yOf(room), cssColor("--budget"), [6, 4], budgetLabel(prepared), "right-below");
      }
      if (peak !== null && peak >= range[0] && peak <= range[1]) this.markPeak(context, prepared, peak, range, yOf);
    }
    if (this.drag && this.drag.to !== null) {
      const low = Math.min(this.drag.from, this.drag.to);
      const high = Math.max(this.drag.from, this.drag.to);
      context.save();
      context.globalAlpha = 0.15;
      context.fillStyle = cssColor("--accent");
      context.fillRect(stepX(this, range, low), top, stepX(this, range, high + 1) - stepX(this, range, low), bottom - top);
      context.restore();
    }
  }

  /**
   * A step line of live bytes; filled below when it is the only series.
   * @param {CanvasRenderingContext2D} context
   * @param {LiveSource} info
   * @param {Series} series
   * @param {(bytes: number) => number} yOf
   * @param {number} bottom
   */
  drawSeries(context, info, series, yOf, bottom) {
    const steps = series.prepared.steps;
    const range = info.range;
    context.save();
    context.beginPath();
    context.rect(MARGIN.left, 0, this.width - MARGIN.left - MARGIN.right, this.height);
    context.clip();
    context.beginPath();
    let started = false;
    for (let row = 0; row < steps.step.length; row++) {
      const step = steps.step[row];
      if (step < range[0] - 1 || step > range[1] + 1) continue;
      const left = stepX(this, range, step);
      const right = stepX(this, range, step + 1);
      const y = yOf(steps.live_bytes[row]);
      if (!started) {
        context.moveTo(left, y);
        started = true;
      } else {
        context.lineTo(left, y);
      }
      context.lineTo(right, y);
    }
    context.strokeStyle = series.color;
    context.lineWidth = 1.6;
    if (series.dash) context.setLineDash(series.dash);
    context.stroke();
    context.setLineDash([]);
    if (info.series.length === 1 && started) {
      context.lineTo(stepX(this, range, Math.min(range[1], steps.step[steps.step.length - 1]) + 1), bottom);
      context.lineTo(stepX(this, range, Math.max(range[0], steps.step[0])), bottom);
      context.closePath();
      context.globalAlpha = 0.2;
      context.fillStyle = series.color;
      context.fill();
    }
    context.restore();
  }

  /**
   * A dot at the peak, labelled with its bytes and operator.
   * @param {CanvasRenderingContext2D} context
   * @param {PreparedArena} prepared
   * @param {number} peak  the peak step
   * @param {[number, number]} range
   * @param {(bytes: number) => number} yOf
   */
  markPeak(context, prepared, peak, range, yOf) {
    const live = prepared.steps.live_bytes[prepared.peakRow];
    const x = stepX(this, range, peak + 0.5);
    const y = yOf(live);
    context.fillStyle = cssColor("--peak");
    context.beginPath();
    context.arc(x, y, 4, 0, 2 * Math.PI);
    context.fill();
    context.font = "600 11px system-ui, sans-serif";
    const label = "peak " + formatBytes(live) + " \u00b7 " + stepLabel(prepared, peak);
    const right = x > this.width * 0.6;
    context.textAlign = right ? "right" : "left";
    context.textBaseline = "top";
    haloText(context, label, x + (right ? -8 : 8), y + 4, cssColor("--peak"));
  }
}
