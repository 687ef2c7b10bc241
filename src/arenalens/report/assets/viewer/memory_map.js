// @ts-check
/* The memory map: one rectangle per buffer, steps across, arena offsets up; the arena size, the
 * lower bounds and the budget as lines; shared bytes hatched. Over the whole arena (`whole`),
 * the arena's buffers sit at its section's offset and every other section is drawn across all
 * steps by part (TFLM: setup and the tail's persistent data above the head), to scale. */

import { budgetLabel, budgetRoom, onScale } from "./budget.js";
import {
  CanvasChart, MARGIN, bufferColor, drawByteAxis, drawStepAxis, horizontalLine, offScaleNote, stepBand, stepX, xStep,
} from "./chart.js";
import { cssColor } from "./dom.js";
import { byteUnit, formatBytes, labelLines } from "./format.js";
import { drawSharedRegions } from "./overlap.js";
import { isSetup, pieceTooltip } from "./sections.js";
import { planOf, state } from "./state.js";
import { bufferRows, hideTooltip, showTooltip } from "./tooltip.js";

/** @typedef {import("./arena_data.js").PreparedArena} PreparedArena */
/** @typedef {import("./sections.js").Piece} Piece */
/** @typedef {import("./sections.js").Mark} Mark */

/**
 * The whole arena around the arena shown.
 * @typedef {object} WholeArena
 * @property {number} offset  where the arena shown starts (its section's offset)
 * @property {Piece[]} pieces  every other section's parts
 * @property {Mark[]} marks  the budget and the board's largest block
 * @property {number} total  the number to declare
 * @property {string} symbol  what it is called ("kTensorArenaSize")
 */

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
 * @property {WholeArena | null} [whole]  draw the whole arena (null: this arena only)
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
    const offset = planOf(geometry.prepared, geometry.planIndex).offsets[position] + shift(geometry);
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
    const piece = position < 0 ? this.pieceAt(geometry, x, y) : null;
    if (position >= 0) {
      showTooltip(event, geometry.prepared.buffers.name[position],
        bufferRows(geometry.prepared, position, geometry.planIndex));
    } else if (piece) {
      const { title, rows } = pieceTooltip(geometry.prepared, piece);
      showTooltip(event, title, rows);
    } else {
      hideTooltip();
    }
    this.canvas.dataset.piece = piece ? piece.section.name + (piece.part ? ": " + piece.part.name : "") : "";
  }

  /**
   * @param {MapGeometry} geometry
   * @param {number} x
   * @param {number} y
   * @returns {Piece | null}  the band of another section under the pointer (whole arena only)
   */
  pieceAt(geometry, x, y) {
    if (!geometry.whole || x < MARGIN.left || x > this.width - MARGIN.right) return null;
    for (const piece of geometry.whole.pieces) {
      if (y >= geometry.yOf(piece.high) - 1 && y <= geometry.yOf(piece.low) + 1) return piece;
    }
    return null;
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
    if (room !== null && room < geometry.maxBytes && !geometry.whole) {
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
    if (geometry.whole) this.drawPieces(context, geometry, geometry.whole);
    const chosen = this.drawBuffers(context, geometry);
    context.globalAlpha = 1;
    const base = shift(geometry);
    drawSharedRegions(context, this, range, view.shared_regions, (bytes) => geometry.yOf(bytes + base));
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
    const whole = geometry.whole;
    const arenaLabel = whole ? arena.name + " " : "arena ";
    horizontalLine(context, this, geometry.yOf(base + view.arena_size), cssColor("--accent"), [],
      arenaLabel + formatBytes(view.arena_size), whole ? "left-below" : "right-above");
    horizontalLine(context, this, geometry.yOf(base + arena.lower_bound), cssColor("--bound"), [2, 3],
      arena.lower_bound === view.arena_size || whole ? "" : "lower bound " + formatBytes(arena.lower_bound), "left-above");
    const overlapBound = arena.overlap_lower_bound;
    if (overlapBound !== null) {
      horizontalLine(context, this, geometry.yOf(base + overlapBound), cssColor("--bound"), [6, 2, 2, 2],
        overlapBound === view.arena_size || whole ? "" : "with overlaps " + formatBytes(overlapBound), "left-below");
    }
    let notes = 0;
    if (whole) {
      horizontalLine(context, this, geometry.yOf(whole.total), cssColor("--ink"), [],
        whole.symbol + " " + formatBytes(whole.total), "right-above");
      for (const mark of whole.marks) {
        if (mark.bytes > geometry.maxBytes) {
          offScaleNote(context, this, geometry.top, mark.label, mark.color, notes++);
          continue;
        }
        horizontalLine(context, this, geometry.yOf(mark.bytes), mark.color, mark.dash, mark.label,
          mark.bytes >= whole.total ? "right-above" : "right-below");
      }
    } else if (room !== null && room > geometry.maxBytes) {
      offScaleNote(context, this, geometry.top, budgetLabel(prepared) + " = " + formatBytes(room), cssColor("--budget"));
    } else if (room !== null) {
      horizontalLine(context, this, geometry.yOf(room), cssColor("--budget"), [6, 4], budgetLabel(prepared), "right-below");
    }
    this.canvas.dataset.scale = whole ? "whole" : "arena";
    this.canvas.dataset.selected = String(chosen);
    this.canvas.dataset.planner = view.planner;
    this.canvas.setAttribute("aria-label", "memory map of " + view.planner + ": arena " + formatBytes(view.arena_size));
  }

  /**
   * Every other section's parts as bands across all steps (setup hatched: free once setup
   * ends), labelled where they are tall enough.
   * @param {CanvasRenderingContext2D} context
   * @param {MapGeometry} geometry
   * @param {WholeArena} whole
   */
  drawPieces(context, geometry, whole) {
    const left = MARGIN.left;
    const width = this.width - MARGIN.left - MARGIN.right;
    context.textAlign = "left";
    context.textBaseline = "middle";
    for (const piece of whole.pieces) {
      const top = geometry.yOf(piece.high);
      const height = Math.max(1, geometry.yOf(piece.low) - top);
      context.globalAlpha = 0.85;
      context.fillStyle = piece.color;
      context.fillRect(left, top, width, height);
      context.globalAlpha = 1;
      if (isSetup(piece)) {
        context.save();
        context.beginPath();
        context.rect(left, top, width, height);
        context.clip();
        context.strokeStyle = "#ffffff";
        context.beginPath();
        for (let offset = -height; offset < width; offset += 7) {
          context.moveTo(left + offset, top + height);
          context.lineTo(left + offset + height, top);
        }
        context.stroke();
        context.restore();
      }
      if (height > 4) {
        context.strokeStyle = "#ffffff";
        context.lineWidth = 1;
        context.strokeRect(left + 0.5, top + 0.5, width - 1, height - 1);
      }
      if (height >= 13) {
        const name = piece.part ? piece.section.name + ": " + piece.part.name : piece.section.name;
        context.fillStyle = "#ffffff";
        context.fillText(name + "  " + formatBytes(piece.high - piece.low), left + 6, top + height / 2);
      }
    }
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
 * @param {MapGeometry} geometry
 * @returns {number}  where the arena shown starts on the map's byte axis
 */
function shift(geometry) {
  return geometry.whole ? geometry.whole.offset : 0;
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
 * The top of a map's byte axis: the largest of the arenas shown, the bound and the budget's room
 * (unless it is so far above that the arena would be a flat smear), with a little headroom.
 * @param {PreparedArena} prepared
 * @param {number[]} planIndices
 * @returns {number}
 */
export function mapMaximum(prepared, planIndices) {
  let top = prepared.arena.lower_bound;
  for (const planIndex of planIndices) top = Math.max(top, planOf(prepared, planIndex).arena_size);
  const room = budgetRoom(prepared);
  if (room !== null && onScale(top, room)) top = Math.max(top, room);
  return Math.max(1, top) * 1.06;
}
