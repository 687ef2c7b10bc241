// @ts-check
/* The Report / Compare switch at the start of each mode's toolbar. */

import { element } from "./dom.js";
import { requestRebuild, state } from "./state.js";

/** @type {["report" | "compare", string][]} */
const MODES = [["report", "Report"], ["compare", "Compare"]];

/** @returns {HTMLElement}  one button per mode; the page is rebuilt in the mode clicked */
export function modeTabs() {
  const tabs = element("div", { class: "tabs", role: "tablist" });
  for (const [mode, text] of MODES) {
    tabs.append(element("button", {
      text, "aria-pressed": String(state.mode === mode), id: "mode-" + mode,
      onclick: () => { state.mode = mode; requestRebuild(); },
    }));
  }
  return tabs;
}
