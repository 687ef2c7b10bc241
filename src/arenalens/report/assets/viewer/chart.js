// @ts-check
/* Canvas charts: a chart that follows its box's width and the screen's pixel ratio, and what the
 * charts draw alike (step and byte axes, labelled lines, step bands). Every chart with a step
 * axis uses the same margins, so the memory map, live bytes and lifetimes line up. */

import { cssColor, element } from "./dom.js";
import { niceStep } from "./format.js";

/** @typedef {import("./format.js").ByteUnit} ByteUnit */

export const PALETTE = ["#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2",
  "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"];
export const MARGIN = { left: 72, right: 18 };

/**
 * @param {number} position  a buffer
 * @returns {string}  its colour in every chart and the table's swatch
 */
export function bufferColor(position) {
  return PALETTE[position % PALETTE.length];
}

export class CanvasChart {
  /**
   * @param {HTMLElement} parent
   * @param {number} height  CSS pixels
   */
  constructor(parent, height) {
    this.canvas = element("canvas");
    parent.append(this.canvas);
    this.height = height;
    this.width = 600;
    this.ratio = 1;
    this.observer = new ResizeObserver(() => this.resize());
    this.observer.observe(parent);
    this.resize();
  }

  resize() {
    const parent = this.canvas.parentElement;
    const width = Math.max(200, parent ? parent.clientWidth : 0);
    const ratio = window.devicePixelRatio || 1;
    this.width = width;
    this.canvas.width = Math.round(width * ratio);
    this.canvas.height = Math.round(this.height * ratio);
    this.canvas.style.height = this.height + "px";
    this.ratio = ratio;
    this.update();
  }

  /** @returns {CanvasRenderingContext2D}  cleared, scaled to CSS pixels, with the chart font */
  clearedContext() {
    const context = this.canvas.getContext("2d");
    if (!context) throw new Error("arenalens: no 2D canvas");
    context.setTransform(this.ratio, 0, 0, this.ratio, 0, 0);
    context.clearRect(0, 0, this.width, this.height);
    context.font = "11px system-ui, -apple-system, 'Segoe UI', Roboto, 'DejaVu Sans', sans-serif";
    return context;
  }

  /**
   * @param {MouseEvent} event
   * @returns {[number, number]}  the pointer in chart coordinates
   */
  point(event) {
    const box = this.canvas.getBoundingClientRect();
    return [event.clientX - box.left, event.clientY - box.top];
  }

  update() {}
}

/**
 * @param {CanvasChart} chart
 * @param {[number, number]} range  first and last step shown
 * @param {number} step  fractional steps fall inside a step's column
 * @returns {number}  x of the step's left edge
 */
export function stepX(chart, range, step) {
  const plotWidth = chart.width - MARGIN.left - MARGIN.right;
  return MARGIN.left + (step - range[0]) / (range[1] - range[0] + 1) * plotWidth;
}

/**
 * @param {CanvasChart} chart
 * @param {[number, number]} range
 * @param {number} x
 * @returns {number}  the step whose column holds x
 */
export function xStep(chart, range, x) {
  const plotWidth = chart.width - MARGIN.left - MARGIN.right;
  return Math.floor(range[0] + (x - MARGIN.left) / plotWidth * (range[1] - range[0] + 1));
}

/**
 * @param {CanvasRenderingContext2D} context
 * @param {CanvasChart} chart
 * @param {[number, number]} range
 * @param {number} y  the axis line
 */
export function drawStepAxis(context, chart, range, y) {
  const span = range[1] - range[0] + 1;
  const tick = Math.max(1, Math.round(niceStep(span, Math.max(2, Math.floor(chart.width / 90)))));
  context.fillStyle = cssColor("--muted");
  context.textAlign = "center";
  context.textBaseline = "top";
  for (let step = Math.ceil(range[0] / tick) * tick; step <= range[1]; step += tick) {
    const x = stepX(chart, range, step + 0.5);
    context.fillText(String(step), x, y + 4);
    context.fillRect(x, y, 1, 3);
  }
}

/**
 * Grid lines and tick labels for bytes from 0 (at bottom) to maxBytes (at top), in one unit.
 * @param {CanvasRenderingContext2D} context
 * @param {CanvasChart} chart
 * @param {number} top
 * @param {number} bottom
 * @param {number} maxBytes
 * @param {ByteUnit} unit
 */
export function drawByteAxis(context, chart, top, bottom, maxBytes, unit) {
  const span = maxBytes / unit.size;
  const tick = niceStep(span, Math.max(2, Math.floor((bottom - top) / 45)));
  context.textAlign = "right";
  context.textBaseline = "middle";
  for (let value = 0; value <= span + 1e-9; value += tick) {
    const y = bottom - value / span * (bottom - top);
    context.fillStyle = cssColor("--grid");
    context.fillRect(MARGIN.left, Math.round(y), chart.width - MARGIN.left - MARGIN.right, 1);
    context.fillStyle = cssColor("--muted");
    context.fillText(String(+value.toFixed(2)), MARGIN.left - 6, y);
  }
  context.save();
  context.translate(14, (top + bottom) / 2);
  context.rotate(-Math.PI / 2);
  context.textAlign = "center";
  context.fillText(unit.name, 0, 0);
  context.restore();
}

/** @typedef {"right-above" | "right-below" | "left-above" | "left-below"} LabelPlace */

/**
 * A labelled horizontal line across the plot.
 * @param {CanvasRenderingContext2D} context
 * @param {CanvasChart} chart
 * @param {number} y
 * @param {string} color
 * @param {number[]} dash
 * @param {string} label  "" for none
 * @param {LabelPlace} [place]
 */
export function horizontalLine(context, chart, y, color, dash, label, place) {
  context.save();
  context.strokeStyle = color;
  context.lineWidth = 1.5;
  context.setLineDash(dash);
  context.beginPath();
  context.moveTo(MARGIN.left, Math.round(y) + 0.5);
  context.lineTo(chart.width - MARGIN.right, Math.round(y) + 0.5);
  context.stroke();
  if (label) {
    const where = place || "right-above";
    const right = where.startsWith("right");
    const above = where.endsWith("above");
    context.setLineDash([]);
    context.font = "600 11px system-ui, sans-serif";
    context.textAlign = right ? "right" : "left";
    context.textBaseline = above ? "bottom" : "top";
    const x = right ? chart.width - MARGIN.right - 4 : MARGIN.left + 4;
    haloText(context, label, x, above ? y - 3 : y + 4, color);
  }
  context.restore();
}

/**
 * Text with a white outline, readable over rectangles and lines.
 * @param {CanvasRenderingContext2D} context
 * @param {string} text
 * @param {number} x
 * @param {number} y
 * @param {string} color
 */
export function haloText(context, text, x, y, color) {
  context.save();
  context.lineJoin = "round";
  context.lineWidth = 3;
  context.strokeStyle = "rgba(255,255,255,0.92)";
  context.strokeText(text, x, y);
  context.fillStyle = color;
  context.fillText(text, x, y);
  context.restore();
}

/**
 * A translucent column over one step (the peak, the selected step, the pointer's).
 * @param {CanvasRenderingContext2D} context
 * @param {CanvasChart} chart
 * @param {[number, number]} range
 * @param {number | null} step  null: nothing to draw
 * @param {number} top
 * @param {number} bottom
 * @param {string} color
 * @param {number} alpha
 */
export function stepBand(context, chart, range, step, top, bottom, color, alpha) {
  if (step === null || step < range[0] || step > range[1]) return;
  const left = stepX(chart, range, step);
  const right = stepX(chart, range, step + 1);
  context.save();
  context.globalAlpha = alpha;
  context.fillStyle = color;
  context.fillRect(left, top, Math.max(1, right - left), bottom - top);
  context.restore();
}

/**
 * A line too far above the data to draw to scale: named above the plot's top left corner (where
 * no line label goes), with an arrow; shortened to fit a narrow chart.
 * @param {CanvasRenderingContext2D} context
 * @param {CanvasChart} chart
 * @param {number} top  the plot's top
 * @param {string} text
 * @param {string} color
 * @param {number} [line]  which line of notes (0 first)
 */
export function offScaleNote(context, chart, top, text, color, line) {
  context.save();
  context.font = "600 11px system-ui, sans-serif";
  context.textAlign = "left";
  context.textBaseline = "bottom";
  const room = chart.width - MARGIN.left - MARGIN.right - 8;
  let shown = "\u2191 " + text + " (above the scale)";
  if (context.measureText(shown).width > room) shown = "\u2191 " + text;
  while (shown.length > 4 && context.measureText(shown).width > room) shown = shown.slice(0, -2) + "\u2026";
  haloText(context, shown, MARGIN.left + 4, top - 4 - 13 * (line || 0), color);
  context.restore();
}
