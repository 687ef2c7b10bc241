// @ts-check
/* The memory map: one rectangle per buffer, steps across, arena offsets up; the arena size, the
 * lower bounds and the budget as lines; shared bytes hatched. */

import { budgetLabel, budgetRoom } from "./budget.js";
import {
  CanvasChart, MARGIN, bufferColor, drawByteAxis, drawStepAxis, horizontalLine, stepBand, stepX, xStep,
} from "./chart.js";
import { cssColor } from "./dom.js";
import { byteUnit, formatBytes, labelLines } from "./format.js";
import { drawSharedRegions } from "./overlap.js";
import { planOf, state } from "./state.js";
import { bufferRows, hideTooltip, showTooltip } from "./tooltip.js";

/** @typedef {import("./arena_data.js").PreparedArena} PreparedArena */

/** @typedef {"selected" | "related" | "dim" | ""} Highlight */

/**
 * What a map draws: an arena, whose plan, which steps, the byte scale, how to mark each buffer.
 * @typedef {object} MapSource
 * @property {PreparedArena} prepared
 * @property {number} planIndex
 * @property {[number, number]} range
 * @property {number} maxBytes  the top of the byte axis
 * @property {(position: number) => Highlight} highlight
 * @property {number} [hovered]  the buffer under the pointer
 */

/**
 * @typedef {object} MapHandlers
 * @property {(position: number, step: number | null) => void} hover  position -1: none
 * @property {(position: number) => void} click  position -1: the background
 */

/** @typedef {MapSource & { top: number, bottom: number, yOf: (bytes: number) => number }} MapGeometry */

/** @typedef {[number, number, number, number]} Rectangle  x, y, width, height */

export class MemoryMap extends CanvasChart {
  /**
   * @param {HTMLElement} parent
   * @param {number} height
   * @param {() => MapSource} source
   * @param {MapHandlers} handlers
   */
  constructor(parent, height, source, handlers) {
    super(parent, height);
    this.source = source;
    this.handlers = handlers;
    this.canvas.setAttribute("role", "img");
    this.canvas.addEventListener("mousemove", (event) => this.move(event));
    this.canvas.addEventListener("mouseleave", () => { hideTooltip(); this.handlers.hover(-1, null); });
    this.canvas.addEventListener("click", (event) => this.handlers.click(this.hit(...this.point(event))));
  }

  /** @returns {MapGeometry | null} */
  geometry() {
    if (!this.source) return null;  // called by the base constructor before source is set
    const info = this.source();
    const top = 22;
    const bottom = this.height - 26;
    /** @param {number} bytes */
    const yOf = (bytes) => bottom - bytes / info.maxBytes * (bottom - top);
    return Object.assign(info, { top, bottom, yOf });
  }

  /**
   * @param {MapGeometry} geometry
   * @param {number} position
   * @returns {Rectangle}
   */
  rectangle(geometry, position) {
    const buffers = geometry.prepared.buffers;
    const offset = planOf(geometry.prepared, geometry.planIndex).offsets[position];
    const left = stepX(this, geometry.range, buffers.first[position]);
    const right = stepX(this, geometry.range, buffers.last[position] + 1);
    const bottom = geometry.yOf(offset);
    const top = geometry.yOf(offset + buffers.size[position]);
    return [left, top, Math.max(1, right - left), Math.max(1, bottom - top)];
  }

  /**
   * @param {MapGeometry} geometry
   * @param {number} position
   * @returns {boolean}  whether the buffer has bytes and lives in the steps shown
   */
  shown(geometry, position) {
    const buffers = geometry.prepared.buffers;
    return buffers.last[position] >= geometry.range[0] && buffers.first[position] <= geometry.range[1] &&
      buffers.size[position] > 0;
  }

  /**
   * @param {number} x
   * @param {number} y
   * @returns {number}  the buffer drawn at (x, y), topmost first; -1 for none
   */
  hit(x, y) {
    const geometry = this.geometry();
    if (!geometry) return -1;
    for (let position = geometry.prepared.bufferCount - 1; position >= 0; position--) {
      if (!this.shown(geometry, position)) continue;
      const [left, top, width, height] = this.rectangle(geometry, position);
      if (x >= left - 1 && x <= left + width + 1 && y >= top - 1 && y <= top + height + 1) return position;
    }
    return -1;
  }

  /** @param {MouseEvent} event */
  move(event) {
    const [x, y] = this.point(event);
    const position = this.hit(x, y);
    const geometry = this.geometry();
    if (!geometry) return;
    this.handlers.hover(position, xStep(this, geometry.range, x));
    if (position >= 0) {
      showTooltip(event, geometry.prepared.buffers.name[position],
        bufferRows(geometry.prepared, position, geometry.planIndex));
    } else {
      hideTooltip();
    }
  }

  /**
   * @param {number} position
   * @returns {{ x: number, y: number } | null}  the buffer's centre on the page (tests point at it)
   */
  center(position) {
    const geometry = this.geometry();
    if (!geometry) return null;
    const [left, top, width, height] = this.rectangle(geometry, position);
    const box = this.canvas.getBoundingClientRect();
    return { x: box.left + left + width / 2, y: box.top + top + height / 2 };
  }

  update() {
    const geometry = this.geometry();
    if (!geometry) return;
    const context = this.clearedContext();
    const { prepared, range } = geometry;
    const arena = prepared.arena;
    const view = planOf(prepared, geometry.planIndex);
    const plotWidth = this.width - MARGIN.left - MARGIN.right;
    drawByteAxis(context, this, geometry.top, geometry.bottom, geometry.maxBytes, byteUnit(geometry.maxBytes));
    drawStepAxis(context, this, range, geometry.bottom);
    const peak = prepared.arena.peak_step;
    stepBand(context, this, range, peak, geometry.top, geometry.bottom, cssColor("--peak"), 0.08);
    const room = budgetRoom(prepared);
    if (room !== null && room < geometry.maxBytes) {
      context.save();
      context.globalAlpha = 0.07;
      context.fillStyle = cssColor("--budget");
      context.fillRect(MARGIN.left, geometry.top, plotWidth, geometry.yOf(room) - geometry.top);
      context.restore();
    }
    context.save();
    context.beginPath();
    context.rect(MARGIN.left, geometry.top - 2, plotWidth, geometry.bottom - geometry.top + 2);
    context.clip();
    const chosen = this.drawBuffers(context, geometry);
    context.globalAlpha = 1;
    drawSharedRegions(context, this, range, view.shared_regions, geometry.yOf);
    this.canvas.dataset.shared = String(view.shared_regions.length);
    const hovered = geometry.hovered === undefined ? -1 : geometry.hovered;
    if (hovered >= 0 && hovered !== chosen && prepared.buffers.size[hovered]) {
      const [left, top, width, height] = this.rectangle(geometry, hovered);
      context.strokeStyle = cssColor("--ink");
      context.lineWidth = 1.5;
      context.strokeRect(left - 0.5, top - 0.5, width + 1, height + 1);
    }
    if (chosen >= 0) {
      const [left, top, width, height] = this.rectangle(geometry, chosen);
      context.strokeStyle = cssColor("--select");
      context.lineWidth = 2.5;
      context.strokeRect(left - 1, top - 1, width + 2, height + 2);
    }
    context.restore();
    if (state.mode === "report") {
      stepBand(context, this, range, state.step, geometry.top, geometry.bottom, cssColor("--accent"), 0.12);
      stepBand(context, this, range, state.cursor, geometry.top, geometry.bottom, cssColor("--ink"), 0.06);
    }
    horizontalLine(context, this, geometry.yOf(view.arena_size), cssColor("--accent"), [],
      "arena " + formatBytes(view.arena_size));
    horizontalLine(context, this, geometry.yOf(arena.lower_bound), cssColor("--bound"), [2, 3],
      arena.lower_bound === view.arena_size ? "" : "lower bound " + formatBytes(arena.lower_bound), "left-above");
    const overlapBound = arena.overlap_lower_bound;
    if (overlapBound !== null) {
      horizontalLine(context, this, geometry.yOf(overlapBound), cssColor("--bound"), [6, 2, 2, 2],
        overlapBound === view.arena_size ? "" : "with overlaps " + formatBytes(overlapBound), "left-below");
    }
    if (room !== null) {
      horizontalLine(context, this, geometry.yOf(room), cssColor("--budget"), [6, 4], budgetLabel(prepared), "right-below");
    }
    this.canvas.dataset.selected = String(chosen);
    this.canvas.dataset.planner = view.planner;
    this.canvas.setAttribute("aria-label", "memory map of " + view.planner + ": arena " + formatBytes(view.arena_size));
  }

  /**
   * One rectangle per buffer shown, labelled when it is large enough.
   * @param {CanvasRenderingContext2D} context
   * @param {MapGeometry} geometry
   * @returns {number}  the selected buffer, -1 for none
   */
  drawBuffers(context, geometry) {
    const buffers = geometry.prepared.buffers;
    let chosen = -1;
    context.textAlign = "center";
    context.textBaseline = "middle";
    for (let position = 0; position < geometry.prepared.bufferCount; position++) {
      if (!this.shown(geometry, position)) continue;
      const mark = geometry.highlight(position);
      if (mark === "selected") chosen = position;
      const [left, top, width, height] = this.rectangle(geometry, position);
      context.globalAlpha = mark === "dim" ? 0.22 : 0.92;
      context.fillStyle = bufferColor(position);
      context.fillRect(left, top, width, height);
      if (width > 4 && height > 4) {
        context.globalAlpha = mark === "dim" ? 0.3 : 1;
        context.strokeStyle = "#ffffff";
        context.lineWidth = 1;
        context.strokeRect(left + 0.5, top + 0.5, width - 1, height - 1);
      }
      if (mark === "related") {
        context.globalAlpha = 1;
        context.strokeStyle = cssColor("--peak");
        context.lineWidth = 2;
        context.strokeRect(left + 1, top + 1, width - 2, height - 2);
      }
      if (width > 34 && height > 14 && mark !== "dim") {
        const lineCount = Math.floor((height - 2) / 13);
        const lines = labelLines(buffers.label[position] || buffers.name[position], Math.floor((width - 6) / 6.2), lineCount);
        if (lines.length < lineCount) lines.push(formatBytes(buffers.size[position]));
        context.globalAlpha = 1;
        context.fillStyle = "#ffffff";
        lines.forEach((line, index) => {
          context.fillText(line, left + width / 2, top + height / 2 + (index - (lines.length - 1) / 2) * 13);
        });
      }
    }
    return chosen;
  }
}

/**
 * How a map marks buffers in report mode: the selection, what the selected step touches, the
 * rest dimmed while either exists.
 * @param {Set<number> | null} related  the buffers the selected step reads and writes
 * @returns {(position: number) => Highlight}
 */
export function reportHighlight(related) {
  return (position) => {
    if (position === state.selected) return "selected";
    if (related && related.has(position)) return "related";
    if (state.selected >= 0 || related) return "dim";
    return "";
  };
}

/**
 * The top of a map's byte axis: the largest of the arenas shown, the bound and the budget's room,
 * with a little headroom.
 * @param {PreparedArena} prepared
 * @param {number[]} planIndices
 * @returns {number}
 */
export function mapMaximum(prepared, planIndices) {
  let top = prepared.arena.lower_bound;
  for (const planIndex of planIndices) top = Math.max(top, planOf(prepared, planIndex).arena_size);
  const room = budgetRoom(prepared);
  if (room !== null) top = Math.max(top, room);
  return Math.max(1, top) * 1.06;
}
