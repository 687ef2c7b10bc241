// @ts-check
/* The numbers first: the number to declare, whether it fits the budget, the arena, its lower
 * bound, overhead, reuse and peak as cards, with the arena's notes; then what to do next. */

import { liveAt, peakStep, reportDocument, stepLabel } from "./arena_data.js";
import { element, panel } from "./dom.js";
import { formatBytes, numberText, percent } from "./format.js";
import { currentArena, planOf, state, views } from "./state.js";

/** @typedef {import("./document.js").DeclareStatus} DeclareStatus */

/** @typedef {{ root: HTMLElement, value: HTMLElement, note: HTMLElement }} Card */

// Statuses under which no arena size answers "does it fit", and what the fit card says then.
/** @type {Partial<Record<DeclareStatus, string>>} */
const NO_FIT_WORDS = {
  "cannot-run": "cannot run",
  "cannot-run-correctly": "cannot run correctly",
  "placeholder-shape": "placeholder input shape",
};
// What the fit card's note says under each of them.
/** @type {Partial<Record<DeclareStatus, string>>} */
const NO_FIT_NOTES = {
  "cannot-run": "no arena size works: see why below",
  "cannot-run-correctly": "its offline plan would corrupt tensors: see why below",
  "placeholder-shape": "give the real input size: --input-shape NAME=SHAPE",
};

/**
 * @param {string} id
 * @param {string} label
 * @returns {Card}
 */
function card(id, label) {
  const value = element("div", { class: "value" });
  const note = element("div", { class: "note" });
  const root = element("div", { class: "card", id }, [element("div", { class: "label", text: label }), value, note]);
  return { root, value, note };
}

/**
 * @param {string} text
 * @returns {string}  with its first letter in upper case, to start a sentence
 */
function sentence(text) {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/** @returns {HTMLElement}  the cards and notes, updated with the plan and budget shown */
export function cards() {
  const box = element("div", { class: "cards" });
  const declared = reportDocument.reports[state.reportIndex].declare;
  const declare = card("card-declare", declared ? declared.symbol : "to declare");
  declare.root.classList.add("lead");
  const fit = card("card-fit", "fits?");
  const arenaCard = card("card-arena", "arena");
  const bound = card("card-bound", "lower bound");
  const overhead = card("card-overhead", "overhead");
  const reuse = card("card-reuse", "without reuse");
  const peak = card("card-peak", "peak");
  box.append(declare.root, fit.root, arenaCard.root, bound.root, overhead.root, reuse.root, peak.root);
  const notes = element("div", { class: "notes", id: "arena-notes" });
  views.push({ update: () => {
    const prepared = currentArena();
    const report = prepared.report;
    const arena = prepared.arena;
    const view = planOf(prepared);
    const lower = view.lower_bound;
    // LiteRT on a device: the model file and the interpreter's peak heap, which no plan
    // switch changes (LiteRT takes no offline plan); else the number with the plan shown.
    const processMemory = report.declare && report.declare.process_memory ? report.declare : null;
    const required = processMemory ? processMemory.required_bytes : view.declare_bytes;
    const partsText = processMemory ? processMemory.parts_text : view.parts_text;
    const runtimePlan = view.is_runtime;
    const status = report.declare ? report.declare.status : "exact";
    const noFit = NO_FIT_WORDS[status];
    const qualifier = report.declare ? report.declare.qualifier : "";
    declare.value.textContent = status === "cannot-run" || status === "cannot-run-correctly" ? noFit || "" :
      formatBytes(required) + (qualifier ? " (" + qualifier + ")" : "");
    const where = numberText(required) + " B" + (partsText ? " \u00b7 " + partsText : "");
    if (status === "cannot-run" && report.declare) {
      const count = report.declare.reasons.length;
      declare.note.textContent = "no size works on " + report.declare.device + ": " +
        (count === 1 ? "the reason is" : "the " + count + " reasons are") + " below";
    } else if (noFit !== undefined) declare.note.textContent = report.declare ? report.declare.reasons.join(" \u00b7 ") : "";
    else if (runtimePlan) declare.note.textContent = where;
    else {
      declare.note.textContent = where + " \u00b7 with '" + view.planner + "', which applies after `" +
        view.optimize_command + "`";
    }
    declare.root.className = "card lead" + (noFit !== undefined ? " bad" : runtimePlan ? "" : " pending");
    const verdict = report.verdict;
    if (noFit !== undefined) {
      fit.value.textContent = noFit;
      fit.note.textContent = NO_FIT_NOTES[status] || "";
      fit.root.className = "card bad";
    } else if (state.budget === null) {
      fit.value.textContent = "no budget";
      fit.note.textContent = "type a budget above, or run `arenalens report " + report.model_argument + " --target NAME`";
      fit.root.className = "card";
    } else {
      const asked = verdict !== null && state.budget === report.budget;
      // On a board with several RAM banks the verdict's placement decides, for the runtime's own
      // plan: its headroom is the least any buffer leaves in its bank (as `check` says).
      const placed = asked && verdict && runtimePlan && verdict.placement && verdict.placement.fits ? verdict.placement : null;
      const margin = placed && verdict && verdict.headroom_bytes !== null ? verdict.headroom_bytes : state.budget - required;
      const boardText = asked && verdict ? verdict.where : formatBytes(state.budget) + " budget";
      // The arena fits the budget asked about, what the NPU needs beside it does not.
      const npuShort = asked && verdict && margin >= 0 ? verdict.npu_short || null : null;
      const fitsWord = placed && placed.banks.length > 1 ? "fits in " + placed.banks.length + " banks" :
        placed && placed.banks.length === 1 ? "fits in " + placed.banks[0].bank : "fits";
      fit.value.textContent = npuShort ? "does not fit" : margin >= 0 ? fitsWord : "over by " + formatBytes(-margin);
      let after = "";
      const missingExtra = verdict && verdict.optimized_missing_extra_text;
      if (margin < 0 && runtimePlan && asked && verdict && verdict.fits_after_optimize) {
        after = " \u00b7 fits after `arenalens optimize`" +
          (verdict.optimized_bytes ? " (" + formatBytes(verdict.optimized_bytes) +
            (missingExtra ? "; " + missingExtra : "") + ")" : "");
      } else if (margin < 0 && runtimePlan && asked && missingExtra) {
        after = " \u00b7 rewritten: " + missingExtra;
      }
      // Bank names come from the catalogue; textContent keeps any name as text all the same.
      const where = placed ? " \u00b7 " + placed.banks.map((buffer) =>
        buffer.part + " " + numberText(buffer.bytes) + " B in " + buffer.bank + " (" + buffer.kind + ")").join(" \u00b7 ") : "";
      fit.note.textContent = boardText + (margin >= 0 ? ": " + formatBytes(margin) + " to spare" : "") +
        (runtimePlan ? "" : " (after optimize)") + after + where + (npuShort ? " \u00b7 the arena fits; " + npuShort : "");
      fit.root.className = "card " + (margin >= 0 && !npuShort ? "good" : "bad");
    }
    arenaCard.value.textContent = formatBytes(view.arena_size);
    arenaCard.note.textContent = view.planner + (view.is_runtime ? " (the runtime's planner)" : "") +
      " \u00b7 '" + arena.name + "' \u00b7 " + numberText(view.arena_size) + " B" +
      (view.missing_extra_text ? "; " + view.missing_extra_text : "");
    bound.value.textContent = formatBytes(lower);
    const overlapBound = arena.overlap_lower_bound;
    if (overlapBound === null) {
      bound.note.textContent = "bytes live at the busiest step: no plan that keeps tensors whole can use less";
    } else {
      bound.note.textContent = formatBytes(arena.lower_bound) + " sharing no bytes; " +
        formatBytes(overlapBound) + " when outputs may slide over consumed inputs (" +
        view.shared_regions.length + " shared in this plan)";
    }
    const gap = view.arena_size - lower;
    if (gap < 0) {
      // Only fixed (offline-planned) buffers may share bytes while live: no bound holds.
      overhead.value.textContent = "none";
      overhead.note.textContent = formatBytes(-gap) + " below the whole-tensor bound: its fixed offsets share bytes on purpose (overlaps)";
    } else {
      overhead.value.textContent = gap === 0 ? "0 B" : formatBytes(gap);
      overhead.note.textContent = gap === 0 ? "this plan meets the lower bound" : percent(gap, lower) + " above the lower bound";
    }
    overhead.root.className = "card " + (gap <= 0 ? "good" : "");
    reuse.value.textContent = formatBytes(arena.no_reuse_bytes);
    reuse.note.textContent = "reuse saves " + formatBytes(arena.no_reuse_bytes - view.arena_size) + " (" +
      percent(arena.no_reuse_bytes - view.arena_size, arena.no_reuse_bytes) + ")";
    const step = peakStep(prepared);
    if (step !== null) {
      peak.value.textContent = formatBytes(prepared.steps.live_bytes[prepared.peakRow]);
      peak.note.textContent = "step " + step + ": " + stepLabel(prepared, step) + " \u00b7 " +
        liveAt(prepared, step).length + " buffers live";
    } else {
      peak.value.textContent = "-";
    }
    // A model the runtime cannot run has no arena to judge: the plan's cards would only distract.
    for (const planCard of [arenaCard, bound, overhead, reuse, peak]) planCard.root.hidden = status === "cannot-run";
    const lines = [];
    if (report.declare && report.declare.device) lines.push("Figure for: " + report.declare.device);
    if (report.declare && status !== "cannot-run") {
      const prefix = sentence(report.declare.reason_prefix) + ": ";
      for (const reason of report.declare.reasons) lines.push(prefix + reason);
    }
    if (status !== "cannot-run") for (const note of arena.notes) lines.push("Note: " + note);
    notes.replaceChildren(...lines.map((text) => element("div", { text })));
  } });
  return element("div", null, [box, notes]);
}

/**
 * Why the runtime cannot run the model, one line per reason, first on the page; null when it can.
 * @returns {HTMLElement | null}
 */
export function cannotRunPanel() {
  const declared = reportDocument.reports[state.reportIndex].declare;
  if (!declared || declared.status !== "cannot-run") return null;
  const section = panel("Why it cannot run", "");
  section.root.id = "cannot-run";
  section.body.append(element("ul", { class: "reasons" }, declared.reasons.map((reason) => element("li", { text: reason }))));
  return section.root;
}

/** @returns {HTMLElement | null}  the report's steps (commands to paste), then diagnose's findings */
export function nextStepsPanel() {
  const report = reportDocument.reports[state.reportIndex];
  // On a page that cannot run, the cannot-run findings are the reasons listed above it.
  const listed = report.declare && report.declare.status === "cannot-run"
    ? report.findings.filter((finding) => finding.rule !== "cannot-run") : report.findings;
  if (!report.next_steps.length && !listed.length) return null;
  const section = panel("What to do next", listed.length ? listed.length + " findings from arenalens diagnose" : "");
  section.root.id = "next-steps";
  const steps = element("ol", { class: "steps" });
  for (const step of report.next_steps) steps.append(element("li", { text: step }));
  section.body.append(steps);
  const shown = listed.slice(0, 8);
  const list = element("div", { class: "findings" });
  for (const finding of shown) {
    const saves = finding.saving_bytes ? " \u00b7 saves " + numberText(finding.saving_bytes) + " B" : "";
    list.append(element("div", { class: "finding " + finding.severity }, [
      element("div", { class: "finding-head" }, [
        element("span", { class: "severity", text: finding.severity }),
        element("b", { text: finding.rule }),
        element("span", { class: "where", text: finding.where }),
      ]),
      element("div", { text: finding.message }),
      element("div", { class: "fix", text: "fix: " + finding.fix + saves }),
    ]));
  }
  if (listed.length > shown.length) {
    list.append(element("div", { class: "count", text: (listed.length - shown.length) +
      " more: arenalens diagnose " + report.model_argument }));
  }
  section.body.append(list);
  return section.root;
}
