// @ts-check
/* DOM helpers: elements from a tag, properties and children; panels; colours from the CSS. Text
 * always goes in as textContent or text nodes, never as HTML: tensor names are untrusted. */

/**
 * Properties of a new element: "text" (textContent), "class", "dataset", "on<event>" handlers;
 * anything else is an attribute.
 * @typedef {Record<string, string | Record<string, string> | ((event: Event) => void) | undefined>} ElementProperties
 */

/** @typedef {Node | string | null | undefined} Child */

/**
 * @template {keyof HTMLElementTagNameMap} Tag
 * @param {Tag} tag
 * @param {ElementProperties | null} [properties]
 * @param {Child[]} [children]
 * @returns {HTMLElementTagNameMap[Tag]}
 */
export function element(tag, properties, children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(properties || {})) {
    if (value === undefined) continue;
    if (typeof value === "function") node.addEventListener(key.slice(2), value);
    else if (typeof value === "object") Object.assign(node.dataset, value);
    else if (key === "text") node.textContent = value;
    else if (key === "class") node.className = value;
    else node.setAttribute(key, value);
  }
  for (const child of children || []) {
    if (child !== null && child !== undefined) {
      node.append(child instanceof Node ? child : document.createTextNode(String(child)));
    }
  }
  return node;
}

// Colours come from CSS variables, read once: getComputedStyle inside a redraw would force a
// style recalculation after every DOM write.
/** @type {Map<string, string>} */
const colorCache = new Map();

/**
 * @param {string} name  a CSS variable, "--accent"
 * @returns {string}
 */
export function cssColor(name) {
  let color = colorCache.get(name);
  if (color === undefined) {
    color = getComputedStyle(document.documentElement).getPropertyValue(name).trim() || "#000";
    colorCache.set(name, color);
  }
  return color;
}

/** @typedef {{ root: HTMLElement, head: HTMLElement, body: HTMLElement }} Panel */

/**
 * A titled section with an optional hint.
 * @param {string} title
 * @param {string} hint
 * @returns {Panel}
 */
export function panel(title, hint) {
  const head = element("div", { class: "panel-head" }, [
    element("h2", { text: title }),
    hint ? element("span", { class: "hint", text: hint }) : null,
  ]);
  const body = element("div");
  const root = element("section", { class: "panel" }, [head, body]);
  return { root, head, body };
}

/**
 * A legend entry: a swatch ("" solid line, "dotted", "dashed", "band", "hatch") and its text.
 * @param {string} style
 * @param {string} color
 * @param {string} text
 * @returns {HTMLElement}
 */
export function legendKey(style, color, text) {
  const swatch = element("span", { class: "key" + (style ? " " + style : "") });
  swatch.style.borderTopColor = color;
  if (style === "band") swatch.style.background = color;
  return element("span", null, [swatch, text]);
}
