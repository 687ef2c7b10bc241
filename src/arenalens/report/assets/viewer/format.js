// @ts-check
/* Numbers the viewer computes itself (a typed budget, a difference, an axis) → text, and the
 * budget box's sizes → bytes. formatBytes and percent give what units.py's format_bytes_short
 * and the terminal's percentages give (tests/report/test_report_browser.py compares them); labels of the
 * document's own values come made. */

const BYTE_UNITS = ["B", "KiB", "MiB", "GiB"];

/**
 * A number with a fixed count of decimals, a tie rounded to even as Python's format() rounds it
 * (toFixed rounds it up: 1.125 KiB would read 1.13 here and 1.12 in the terminal).
 * @param {number} value
 * @param {number} digits
 * @returns {string}
 */
export function fixedDecimals(value, digits) {
  const scale = 10 ** digits;
  const scaled = Math.abs(value) * scale;
  const whole = Math.floor(scaled);
  const fraction = scaled - whole;
  const rounded = fraction > 0.5 || (fraction === 0.5 && whole % 2 === 1) ? whole + 1 : whole;
  return (value < 0 ? "-" : "") + (rounded / scale).toFixed(digits);
}

/**
 * Bytes → short text with binary units: 512 B, 1.5 KiB, 2.25 MiB.
 * @param {number} value
 * @returns {string}
 */
export function formatBytes(value) {
  let scaled = Number(value);
  for (let unitIndex = 0; unitIndex < BYTE_UNITS.length; unitIndex++) {
    if (Math.abs(scaled) < 1024 || unitIndex === BYTE_UNITS.length - 1) {
      if (unitIndex === 0) return Math.trunc(scaled) + " B";
      return fixedDecimals(scaled, 2).replace(/0+$/, "").replace(/\.$/, "") + " " + BYTE_UNITS[unitIndex];
    }
    scaled /= 1024;
  }
  return String(value);
}

/**
 * A change in bytes: "+1.5 KiB", "−512 B", or "=".
 * @param {number} delta
 * @returns {string}
 */
export function signedBytes(delta) {
  if (delta === 0) return "=";
  return (delta > 0 ? "+" : "\u2212") + formatBytes(Math.abs(delta));
}

/**
 * @param {number} part
 * @param {number} whole
 * @returns {string}  "12.5%", or "-" when whole is not positive
 */
export function percent(part, whole) {
  return whole > 0 ? fixedDecimals(100 * part / whole, 1) + "%" : "-";
}

/**
 * 1234567 → "1,234,567".
 * @param {number} value
 * @returns {string}
 */
export function numberText(value) {
  return value.toLocaleString("en-US");
}

// Mirrors arenalens.units.parse_size: K, KB and KiB are all 1024 (as datasheets write them);
// fractions of a byte dropped. The budget box reads what the user types, so it stays here.
/** @type {Record<string, number>} */
const SIZE_UNITS = {
  "": 1, b: 1, k: 1024, kb: 1024, kib: 1024, m: 1048576, mb: 1048576, mib: 1048576,
  g: 1073741824, gb: 1073741824, gib: 1073741824,
};

/**
 * "320KB" / "0.5MiB" / "307200" → bytes, or null when the text is not a size.
 * @param {string} text
 * @returns {number | null}
 */
export function parseSize(text) {
  const match = /^\s*([0-9]+(?:\.[0-9]*)?|\.[0-9]+)\s*([A-Za-z]*)\s*$/.exec(text);
  if (!match) return null;
  const unit = SIZE_UNITS[match[2].toLowerCase()];
  if (unit === undefined) return null;
  return Math.floor(parseFloat(match[1]) * unit);
}

/**
 * A short label cut to limit characters, keeping its tail (…tion_12): the tail tells layers apart.
 * @param {string} label
 * @param {number} limit
 * @returns {string}
 */
export function fitLabel(label, limit) {
  return label.length <= limit ? label : "\u2026" + label.slice(-Math.max(limit - 1, 1));
}

/**
 * A short label → at most lineCount lines of at most widthChars characters (as report/images.py
 * label_lines does for the same rectangles): its parts on separate lines when the box is tall,
 * else the first part (it tells the tensor apart), else a single part's tail.
 * @param {string} label
 * @param {number} widthChars
 * @param {number} lineCount
 * @returns {string[]}
 */
export function labelLines(label, widthChars, lineCount) {
  if (lineCount < 1 || widthChars < 3) return [];
  if (label.length <= widthChars) return [label];
  const parts = label.split("/");
  if (parts.length > 1 && parts.length <= lineCount && parts.every((part) => part.length <= widthChars)) {
    return parts;
  }
  return [fitLabel(parts[0], widthChars)];
}

/** @typedef {{ name: string, size: number }} ByteUnit */

/**
 * The one unit a byte axis is drawn in, so its tick labels stay short.
 * @param {number} largest
 * @returns {ByteUnit}
 */
export function byteUnit(largest) {
  if (largest < 2048) return { name: "B", size: 1 };
  if (largest < 2 * 1048576) return { name: "KiB", size: 1024 };
  return { name: "MiB", size: 1048576 };
}

/**
 * A round tick spacing (1, 2 or 5 times a power of ten) giving about count ticks over span.
 * @param {number} span
 * @param {number} count
 * @returns {number}
 */
export function niceStep(span, count) {
  const raw = span / Math.max(count, 1);
  if (raw <= 0) return 1;
  const magnitude = Math.pow(10, Math.floor(Math.log10(raw)));
  const normalized = raw / magnitude;
  return (normalized < 1.5 ? 1 : normalized < 3 ? 2 : normalized < 7 ? 5 : 10) * magnitude;
}
