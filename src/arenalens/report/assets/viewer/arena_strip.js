// @ts-check
/* The whole arena as one bar, to scale: every section of the number to declare with the plan
 * shown (TFLM: the head from the start, setup, the tail by part from the end), with the budget
 * and the board's largest block marked. Hover a piece for what fills it; click the arena shown
 * to zoom the memory map into it, anything else to see the whole arena there. */

import { CanvasChart, haloText } from "./chart.js";
import { cssColor, element } from "./dom.js";
import { formatBytes } from "./format.js";
import {
  declareSymbol, isSetup, pieceTooltip, sectionsEnd, shownSections, wholeArenaMarks, wholeArenaPieces, wholeArenaTop,
} from "./sections.js";
import { currentArena } from "./state.js";
import { hideTooltip, showTooltip } from "./tooltip.js";

/** @typedef {import("./sections.js").Piece} Piece */

const SIDE = 10;  // left and right margins, CSS pixels
const BAR_TOP = 28;  // room above for the section labels and their leader lines
const BAR_HEIGHT = 24;

export class ArenaStrip extends CanvasChart {
  /**
   * @param {HTMLElement} parent
   * @param {(piece: Piece) => void} click
   */
  constructor(parent, click) {
    super(parent, 90);
    this.click = click;
    // The parts by name, in words under the bar: a phone has no hover, and small parts have
    // no room for a label on the bar.
    this.legend = element("div", { class: "strip-parts", id: "arena-strip-parts" });
    parent.append(this.legend);
    this.canvas.id = "arena-strip";
    this.canvas.setAttribute("role", "img");
    this.canvas.addEventListener("mousemove", (event) => this.move(event));
    this.canvas.addEventListener("mouseleave", () => hideTooltip());
    this.canvas.addEventListener("click", (event) => {
      const piece = this.hit(...this.point(event));
      if (piece) this.click(piece);
    });
  }

  /**
   * @param {number} bytes
   * @returns {number}  x of a byte position
   */
  xOf(bytes) {
    const top = wholeArenaTop(currentArena());
    return SIDE + bytes / top * (this.width - 2 * SIDE);
  }

  /**
   * @param {number} x
   * @param {number} y
   * @returns {Piece | null}  the piece under the pointer; the nearest within 3 px for thin ones
   */
  hit(x, y) {
    if (y < BAR_TOP - 6 || y > BAR_TOP + BAR_HEIGHT + 6) return null;
    let best = null;
    let distance = 3.5;
    for (const piece of wholeArenaPieces(currentArena())) {
      const left = this.xOf(piece.low);
      const right = this.xOf(piece.high);
      const away = x < left ? left - x : x > right ? x - right : 0;
      if (away < distance) {
        best = piece;
        distance = away;
      }
    }
    return best;
  }

  /** @param {MouseEvent} event */
  move(event) {
    const piece = this.hit(...this.point(event));
    if (!piece) {
      hideTooltip();
      return;
    }
    const { title, rows } = pieceTooltip(currentArena(), piece);
    showTooltip(event, title, rows);
  }

  /**
   * @param {Piece} piece
   * @returns {{ x: number, y: number } | null}  its centre on the page (tests point at it)
   */
  center(piece) {
    const box = this.canvas.getBoundingClientRect();
    const left = this.xOf(piece.low);
    const right = this.xOf(piece.high);
    return { x: box.left + (left + right) / 2, y: box.top + BAR_TOP + BAR_HEIGHT / 2 };
  }

  update() {
    if (!this.click) return;  // called by the base constructor before the handler is set
    const prepared = currentArena();
    const context = this.clearedContext();
    const sections = shownSections(prepared);
    const pieces = wholeArenaPieces(prepared);
    for (const piece of pieces) {
      const left = this.xOf(piece.low);
      const width = Math.max(piece.high > piece.low ? 0.75 : 0, this.xOf(piece.high) - left);
      context.fillStyle = piece.color;
      context.fillRect(left, BAR_TOP, width, BAR_HEIGHT);
      if (isSetup(piece)) hatch(context, left, width);
    }
    context.strokeStyle = "#ffffff";
    context.lineWidth = 1.5;
    for (const section of sections.slice(1)) {
      const x = Math.round(this.xOf(section.offset)) + 0.5;
      context.beginPath();
      context.moveTo(x, BAR_TOP);
      context.lineTo(x, BAR_TOP + BAR_HEIGHT);
      context.stroke();
    }
    this.drawSectionLabels(context);
    const end = sectionsEnd(sections);
    context.font = "11px system-ui, sans-serif";
    context.textBaseline = "top";
    /** @type {[number, string, string][]} */
    const below = [[end, declareSymbol(prepared) + " " + formatBytes(end), cssColor("--accent")]];
    for (const mark of wholeArenaMarks(prepared)) {
      const x = Math.round(this.xOf(mark.bytes)) + 0.5;
      context.save();
      context.strokeStyle = mark.color;
      context.lineWidth = 1.5;
      context.setLineDash(mark.dash);
      context.beginPath();
      context.moveTo(x, BAR_TOP - 6);
      context.lineTo(x, BAR_TOP + BAR_HEIGHT + 6);
      context.stroke();
      context.restore();
      below.push([mark.bytes, mark.label, mark.color]);
    }
    this.drawBelow(context, below);
    this.legend.replaceChildren(...pieces.filter((piece) => piece.part !== null).map((piece) => {
      const part = /** @type {import("./document.js").SectionPart} */ (piece.part);
      const item = element("span", { text: piece.section.name + ": " + part.name + " " + formatBytes(part.bytes) });
      const key = element("span", { class: "key band" });
      key.style.background = piece.color;  // CSSOM, which the page's CSP allows (no style attribute)
      item.prepend(key);
      return item;
    }));
    this.canvas.dataset.sections = sections.map((section) => section.name).join(",");
    this.canvas.dataset.total = String(end);
    this.canvas.setAttribute("aria-label", "the whole arena: " + sections.map((section) =>
      section.name + " " + formatBytes(section.bytes)).join(", ") + "; " + declareSymbol(prepared) + " " + formatBytes(end));
  }

  /**
   * Each section's name and size above the bar, where the strip leaves room; a label not over
   * its section (moved right, or wider than the section) gets a line pointing at it.
   * @param {CanvasRenderingContext2D} context
   */
  drawSectionLabels(context) {
    context.textBaseline = "bottom";
    context.font = "600 11px system-ui, sans-serif";
    let freeFrom = 0;
    for (const section of shownSections(currentArena())) {
      const left = this.xOf(section.offset);
      const right = this.xOf(section.offset + section.bytes);
      const text = section.name + " " + formatBytes(section.bytes);
      const width = context.measureText(text).width;
      const x = Math.max(left, freeFrom);
      if (x + width > this.width - 2 || (right - left < 3 && x > right + 40)) continue;
      context.textAlign = "left";
      context.fillStyle = cssColor("--ink");
      context.fillText(text, x, BAR_TOP - 9);
      if (x > left + 0.5 || width > right - left) {
        context.save();
        context.strokeStyle = cssColor("--muted");
        context.lineWidth = 1;
        context.beginPath();
        context.moveTo(x + 2, BAR_TOP - 8);
        context.lineTo((left + right) / 2, BAR_TOP - 1);
        context.stroke();
        context.restore();
      }
      freeFrom = x + width + 10;
    }
  }

  /**
   * Labels under the bar at byte positions, right-aligned at their mark, moved down a line
   * when they would run into the one before.
   * @param {CanvasRenderingContext2D} context
   * @param {[number, string, string][]} labels  [bytes, text, colour]
   */
  drawBelow(context, labels) {
    const sorted = [...labels].sort((left, right) => left[0] - right[0]);
    /** @type {number[]} */
    const lineEnds = [];
    for (const [bytes, text, color] of sorted) {
      const x = this.xOf(bytes);
      const width = context.measureText(text).width;
      const alignRight = x - width >= 2;
      const from = alignRight ? x - width : x;
      let line = 0;
      while (line < lineEnds.length && lineEnds[line] > from - 8) line++;
      lineEnds[line] = from + width;
      context.textAlign = alignRight ? "right" : "left";
      haloText(context, text, x + (alignRight ? -2 : 2), BAR_TOP + BAR_HEIGHT + 3 + line * 12, color);
    }
  }
}

/**
 * Diagonal lines over a setup piece: bytes needed only while AllocateTensors() runs.
 * @param {CanvasRenderingContext2D} context
 * @param {number} left
 * @param {number} width
 */
function hatch(context, left, width) {
  context.save();
  context.beginPath();
  context.rect(left, BAR_TOP, width, BAR_HEIGHT);
  context.clip();
  context.strokeStyle = "#ffffff";
  context.lineWidth = 1;
  context.beginPath();
  for (let offset = -BAR_HEIGHT; offset < width; offset += 5) {
    context.moveTo(left + offset, BAR_TOP + BAR_HEIGHT);
    context.lineTo(left + offset + BAR_HEIGHT, BAR_TOP);
  }
  context.stroke();
  context.restore();
}
