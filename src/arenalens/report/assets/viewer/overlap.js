// @ts-check
/* Allowed overlaps (TFLM --overlap: an output may start below an input its operator consumes):
 * the bytes they share in a plan, hatched on the memory map. The regions come from the document
 * (report/data.py: ArenaReport.shared_regions), one list per plan. */

import { stepX } from "./chart.js";
import { cssColor } from "./dom.js";

/** @typedef {import("./chart.js").CanvasChart} CanvasChart */
/** @typedef {import("./document.js").SharedRegion} SharedRegion */

/**
 * Hatches each shared region: the bytes the output writes over the input being consumed.
 * @param {CanvasRenderingContext2D} context
 * @param {CanvasChart} chart
 * @param {[number, number]} range
 * @param {SharedRegion[]} regions
 * @param {(bytes: number) => number} yOf
 */
export function drawSharedRegions(context, chart, range, regions, yOf) {
  for (const [, first, last, low, high] of regions) {
    if (last < range[0] || first > range[1]) continue;
    const left = stepX(chart, range, first);
    const right = stepX(chart, range, last + 1);
    const top = yOf(high);
    const bottom = yOf(low);
    context.save();
    context.beginPath();
    context.rect(left, top, right - left, bottom - top);
    context.clip();
    context.strokeStyle = cssColor("--select");
    context.globalAlpha = 0.75;
    context.lineWidth = 1;
    context.beginPath();
    for (let offset = -(bottom - top); offset < right - left; offset += 6) {
      context.moveTo(left + offset, bottom);
      context.lineTo(left + offset + (bottom - top), top);
    }
    context.stroke();
    context.restore();
    context.strokeStyle = cssColor("--select");
    context.lineWidth = 1.2;
    context.strokeRect(left + 0.5, top + 0.5, Math.max(1, right - left - 1), Math.max(1, bottom - top - 1));
  }
}

/**
 * @param {import("./document.js").ReportDocument} reportDocument
 * @returns {boolean}  whether any arena of any report has allowed overlaps (for the legend)
 */
export function hasOverlaps(reportDocument) {
  return reportDocument.reports.some((report) => report.arenas.some((arena) => arena.overlaps.output.length > 0));
}
