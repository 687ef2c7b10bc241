// @ts-check
/* A sortable table whose rows are numbers (buffer positions, step rows, keys): only the rows in
 * view exist in the DOM, so thousands of rows scroll fast. Cells are text or nodes, never HTML. */

import { element } from "./dom.js";

// Row height in CSS pixels (report.css sets the same).
const ROW_HEIGHT = 24;

/**
 * @typedef {object} Column
 * @property {string} key
 * @property {string} label
 * @property {string} width  a CSS grid track
 * @property {boolean} [numeric]  right-aligned; sorts largest first
 * @property {string} [title]
 * @property {(row: number) => string | number} value  what the cell shows (and sorts by)
 * @property {(row: number) => string | number} [sortValue]  what it sorts by, when not value
 * @property {(left: number, right: number) => number} [compare]  a full comparison instead
 * @property {(row: number) => Node | string} [render]  the cell, when not value as text
 * @property {boolean} [optional]  left out on a phone-wide screen, so the table fits it
 */

// Below this width (report.css's phone layout) the optional columns are left out.
const NARROW = "(max-width: 600px)";

/**
 * @typedef {object} TableOptions
 * @property {number} height  of the scrolling body, in CSS pixels
 * @property {string} sortKey
 * @property {number} sortDirection  1 ascending, -1 descending
 * @property {() => number[]} rows
 * @property {(row: number) => void} click
 * @property {(row: number) => void} [hover]
 * @property {(row: number) => string} [mark]  an extra class: "selected", "related" or ""
 * @property {Column[]} columns
 */

// Matches report.css: .vhead and .vrow column gap and side padding, in CSS pixels.
const COLUMN_GAP = 10;
const SIDE_PADDING = 10;

/**
 * @param {Column[]} columns
 * @returns {number}  the narrowest width that shows every column at its minimum
 */
function minimumWidth(columns) {
  let total = 2 * SIDE_PADDING + COLUMN_GAP * (columns.length - 1);
  for (const column of columns) {
    const found = /(\d+(?:\.\d+)?)px/.exec(column.width);
    total += found ? Number(found[1]) : 0;
  }
  return Math.ceil(total);
}

export class VirtualTable {
  /**
   * @param {HTMLElement} parent
   * @param {TableOptions} options
   */
  constructor(parent, options) {
    this.options = options;
    const narrow = typeof window.matchMedia === "function" && window.matchMedia(NARROW).matches;
    this.columns = narrow ? options.columns.filter((column) => !column.optional) : options.columns;
    this.template = this.columns.map((column) => column.width).join(" ");
    this.sortKey = options.sortKey;
    this.sortDirection = options.sortDirection;
    /** @type {number[]} */
    this.rows = [];
    this.root = element("div", { class: "vtable" });
    this.head = element("div", { class: "vhead", role: "row" });
    this.head.style.gridTemplateColumns = this.template;
    this.headCells = this.columns.map((column) => {
      const cell = element("span", {
        text: column.label, class: column.numeric ? "num" : "", title: column.title || column.label, role: "columnheader",
      });
      cell.addEventListener("click", () => {
        if (this.sortKey === column.key) this.sortDirection = -this.sortDirection;
        else {
          this.sortKey = column.key;
          this.sortDirection = column.numeric ? -1 : 1;
        }
        this.refresh();
      });
      this.head.append(cell);
      return cell;
    });
    this.body = element("div", { class: "vbody", role: "rowgroup" });
    this.body.style.height = options.height + "px";
    // Narrower than its columns' minimum, the table scrolls sideways inside its own box.
    const minimum = minimumWidth(this.columns);
    this.head.style.minWidth = minimum + "px";
    this.body.style.minWidth = minimum + "px";
    this.spacer = element("div");
    this.body.append(this.spacer);
    // Scroll position is cached from scroll events: reading scrollTop while other views are
    // writing to the DOM would force a full layout on every redraw.
    this.scrollTop = 0;
    this.body.addEventListener("scroll", () => { this.scrollTop = this.body.scrollTop; this.paint(); });
    this.root.append(this.head, this.body);
    parent.append(this.root);
    /** @type {HTMLElement[]} */
    this.pool = [];
    this.version = 0;
  }

  /** Asks for the rows again, sorts them and repaints. */
  refresh() {
    const rows = this.options.rows();
    const column = this.columns.find((candidate) => candidate.key === this.sortKey);
    if (column) {
      const direction = this.sortDirection;
      const value = column.sortValue || column.value;
      const compare = column.compare || ((/** @type {number} */ left, /** @type {number} */ right) => {
        const leftValue = value(left);
        const rightValue = value(right);
        return leftValue < rightValue ? -1 : leftValue > rightValue ? 1 : 0;
      });
      rows.sort((left, right) => direction * compare(left, right) || left - right);  // ties: row order
    }
    this.rows = rows;
    this.version += 1;  // row contents are stale: paint rebuilds them
    this.columns.forEach((candidate, index) => {
      const cell = this.headCells[index];
      if (candidate.key === this.sortKey) cell.dataset.sort = this.sortDirection > 0 ? "\u25b2" : "\u25bc";
      else delete cell.dataset.sort;
    });
    this.spacer.style.height = rows.length * ROW_HEIGHT + "px";
    const limit = Math.max(0, rows.length * ROW_HEIGHT - this.options.height);
    if (this.scrollTop > limit) {
      this.scrollTop = limit;
      this.body.scrollTop = limit;
    }
    this.paint();
  }

  /** Shows the rows in view, reusing row elements. */
  paint() {
    const top = this.scrollTop;
    const first = Math.max(0, Math.floor(top / ROW_HEIGHT) - 4);
    const last = Math.min(this.rows.length, Math.ceil((top + this.options.height) / ROW_HEIGHT) + 4);
    let used = 0;
    for (let position = first; position < last; position++) {
      const index = this.rows[position];
      const row = this.pool[used] || this.newRow();
      row.style.display = "";
      row.style.top = position * ROW_HEIGHT + "px";
      const mark = this.options.mark ? this.options.mark(index) : "";
      row.className = "vrow" + (mark ? " " + mark : "");
      // Rebuild cells only when the row shows another item or the data changed: a redraw on
      // every hover would replace the element under a pressed mouse button and lose the click.
      const stamp = index + ":" + this.version;
      if (row.dataset.stamp !== stamp) {
        row.dataset.stamp = stamp;
        row.dataset.index = String(index);
        row.replaceChildren(...this.columns.map((column) => this.cell(column, index)));
      }
      used++;
    }
    for (let spare = used; spare < this.pool.length; spare++) this.pool[spare].style.display = "none";
  }

  /** @returns {HTMLElement}  a new pooled row element */
  newRow() {
    const row = element("div", { class: "vrow", role: "row", tabindex: "0" });
    row.addEventListener("keydown", (event) => {
      if (event.key === "Enter" || event.key === " ") {
        event.preventDefault();
        row.click();
      }
    });
    row.style.gridTemplateColumns = this.template;
    row.addEventListener("click", () => this.options.click(Number(row.dataset.index)));
    row.addEventListener("mouseenter", () => {
      if (this.options.hover) this.options.hover(Number(row.dataset.index));
    });
    this.body.append(row);
    this.pool.push(row);
    return row;
  }

  /**
   * @param {Column} column
   * @param {number} index
   * @returns {HTMLElement}
   */
  cell(column, index) {
    const content = column.render ? column.render(index) : String(column.value(index));
    const cell = element("span", { class: column.numeric ? "num " : "" });
    if (content instanceof Node) cell.append(content);
    else {
      cell.textContent = content;
      cell.title = content;
    }
    return cell;
  }

  /** @param {number} index  scrolls its row into view */
  scrollToIndex(index) {
    const position = this.rows.indexOf(index);
    if (position < 0) return;
    const y = position * ROW_HEIGHT;
    if (y < this.scrollTop || y > this.scrollTop + this.options.height - ROW_HEIGHT) {
      this.scrollTop = Math.max(0, y - this.options.height / 2);
      this.body.scrollTop = this.scrollTop;
    }
    this.paint();
  }
}
