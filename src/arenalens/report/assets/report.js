/* arenalens HTML report viewer.
 *
 * Hand-written vanilla JavaScript: no charting library ships with Python, and the page must open
 * offline with no CDN. Reads the JSON document embedded by report/html.py and draws linked views:
 * memory map, live bytes, lifetimes (canvases), tensor table and op list (virtual lists, so 2,000+
 * rows stay fast), a details panel, a planner switch, a budget line and a compare mode.
 *
 * Model-derived text (tensor and op names) is only ever assigned to textContent or drawn with
 * fillText, never parsed as HTML.
 */
(function () {
  "use strict";

  const DATA = JSON.parse(document.getElementById("arenalens-data").textContent);
  const PALETTE = ["#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2",
                   "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"];
  const MARGIN = { left: 72, right: 18 };
  const ROW = 24;

  // ------------------------------------------------------------------------------------------
  // Small helpers

  function formatBytes(value) {
    let v = Number(value);
    const units = ["B", "KiB", "MiB", "GiB"];
    for (let u = 0; u < units.length; u++) {
      if (Math.abs(v) < 1024 || u === units.length - 1) {
        if (u === 0) return Math.trunc(v) + " B";
        return v.toFixed(2).replace(/0+$/, "").replace(/\.$/, "") + " " + units[u];
      }
      v /= 1024;
    }
    return String(value);
  }

  function signedBytes(delta) {
    if (delta === 0) return "=";
    return (delta > 0 ? "+" : "\u2212") + formatBytes(Math.abs(delta));
  }

  function percent(part, whole) {
    return whole > 0 ? (100 * part / whole).toFixed(1) + "%" : "-";
  }

  // Mirrors arenalens.units.parse_size: K, KB and KiB are all 1024 (as datasheets write them);
  // fractions of a byte dropped.
  const SIZE_UNITS = { "": 1, b: 1, k: 1024, kb: 1024, kib: 1024, m: 1048576, mb: 1048576,
                       mib: 1048576, g: 1073741824, gb: 1073741824, gib: 1073741824 };
  function parseSize(text) {
    const match = /^\s*([0-9]+(?:\.[0-9]*)?|\.[0-9]+)\s*([A-Za-z]*)\s*$/.exec(text);
    if (!match) return null;
    const unit = SIZE_UNITS[match[2].toLowerCase()];
    if (unit === undefined) return null;
    return Math.floor(parseFloat(match[1]) * unit);
  }

  function el(tag, props, children) {
    const node = document.createElement(tag);
    if (props) {
      for (const key of Object.keys(props)) {
        const value = props[key];
        if (key === "text") node.textContent = value;
        else if (key === "class") node.className = value;
        else if (key === "dataset") Object.assign(node.dataset, value);
        else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
        else node.setAttribute(key, value);
      }
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
  const colorCache = new Map();
  function cssColor(name) {
    if (!colorCache.has(name)) {
      colorCache.set(name, getComputedStyle(document.documentElement).getPropertyValue(name).trim() || "#000");
    }
    return colorCache.get(name);
  }

  function shape(list) {
    return list.length ? list.join("\u00d7") : "scalar";
  }

  // Scratch buffers and temporaries have no tensor shape: say what they are instead.
  function shapeText(A, i) {
    return A.B.kind[i] === "tensor" || A.B.kind[i] === "variable" ? shape(A.B.shape[i]) : A.B.kind[i];
  }

  // First ';'-joined part, then the last two path parts, then the layer, then cut.
  function shortLabel(name, limit) {
    const first = name.split(";")[0] || "(unnamed)";
    const parts = first.split("/").filter(Boolean);
    const layer = parts.length > 1 ? parts[parts.length - 2] : first;
    for (const candidate of [first, parts.slice(-2).join("/"), layer]) {
      if (candidate.length <= limit) return candidate;
    }
    // The tail tells layers apart (activation_12 vs activation_13).
    return "\u2026" + layer.slice(-Math.max(limit - 1, 1));
  }

  // A short label cut to limit characters, keeping its tail (…tion_12).
  function fitLabel(label, limit) {
    return label.length <= limit ? label : "\u2026" + label.slice(-Math.max(limit - 1, 1));
  }

  // Mirrors report/images.py label_lines: parts on separate lines when the box is tall,
  // else the first part (it tells the tensor apart), else a single part's tail.
  function labelLines(label, width, count) {
    if (count < 1 || width < 3) return [];
    if (label.length <= width) return [label];
    const parts = label.split("/");
    if (parts.length > 1 && parts.length <= count && parts.every((p) => p.length <= width)) return parts;
    return [fitLabel(parts[0], width)];
  }

  function byteUnit(largest) {
    if (largest < 2048) return { name: "B", size: 1 };
    if (largest < 2 * 1048576) return { name: "KiB", size: 1024 };
    return { name: "MiB", size: 1048576 };
  }

  function niceStep(span, count) {
    const raw = span / Math.max(count, 1);
    if (raw <= 0) return 1;
    const magnitude = Math.pow(10, Math.floor(Math.log10(raw)));
    const norm = raw / magnitude;
    return (norm < 1.5 ? 1 : norm < 3 ? 2 : norm < 7 ? 5 : 10) * magnitude;
  }

  // ------------------------------------------------------------------------------------------
  // Data: one prepared object per (report, arena)

  const prepared = new Map();

  function arenaOf(r, a) {
    const key = r + ":" + a;
    if (prepared.has(key)) return prepared.get(key);
    const report = DATA.reports[r];
    const arena = report.arenas[a];
    const B = arena.buffers;
    const S = arena.steps;
    const n = B.id.length;
    const stepRow = new Map();
    S.step.forEach((step, row) => stepRow.set(step, row));
    const lowStep = S.step.length ? S.step[0] : 0;
    const highStep = S.step.length ? S.step[S.step.length - 1] : 0;
    const byFirst = Array.from({ length: n }, (_, i) => i)
      .sort((x, y) => B.first[x] - B.first[y] || B.last[x] - B.last[y] || x - y);
    const lifetimeRow = new Int32Array(n);
    byFirst.forEach((i, row) => { lifetimeRow[i] = row; });
    const seen = new Map();
    const keys = B.name.map((name, i) => {
      const base = name || "<unnamed " + B.kind[i] + ">";
      const count = (seen.get(base) || 0) + 1;
      seen.set(base, count);
      return count === 1 ? base : base + "#" + count;
    });
    const keyIndex = new Map(keys.map((k, i) => [k, i]));
    let peakRow = -1;
    S.live_bytes.forEach((live, row) => {
      if (peakRow < 0 || live > S.live_bytes[peakRow]) peakRow = row;
    });
    // Operator numbers need their subgraph when the arena's steps span several.
    const nested = S.subgraph.some((subgraph) => subgraph !== 0);
    const info = { r, a, report, arena, B, S, n, stepRow, lowStep, highStep, byFirst,
                   lifetimeRow, keys, keyIndex, peakRow, nested };
    prepared.set(key, info);
    return info;
  }

  function stepLabel(A, step) {
    if (step === null || step === undefined) return "graph input";
    const row = A.stepRow.get(step);
    if (row === undefined) return "step " + step;
    const op = A.S.operator[row];
    const where = A.nested ? "subgraph " + A.S.subgraph[row] + " " : "";
    return op === null ? A.S.opcode[row] : where + "op " + op + " " + A.S.opcode[row];
  }

  function liveAt(A, step) {
    const live = [];
    for (let i = 0; i < A.n; i++) if (A.B.first[i] <= step && step <= A.B.last[i]) live.push(i);
    return live.sort((x, y) => A.B.size[y] - A.B.size[x] || x - y);
  }

  // Bytes the runtime needs besides this arena (TFLM tail, LiteRT's other arenas): the
  // total to declare with every arena's first plan, minus this arena's first plan.
  function otherBytes(A) {
    const first = A.arena.plans.length ? A.arena.plans[0].arena_size : 0;
    return Math.max(0, A.report.required_bytes - first);
  }

  // Room for this arena under the budget: the budget minus what the runtime needs besides this
  // arena with the plan shown (TFLM: tail and setup).
  function budgetRoom(A) {
    if (state.budget === null) return null;
    const view = plan(A);
    return state.budget - (requiredWith(A, view) - view.arena_size);
  }

  // Allowed overlaps (TFLM --overlap: an output may start below an input it consumes) whose
  // buffers share bytes in a view: [overlap index, first step, last step, low byte, high byte].
  function sharedRegions(A, view) {
    const O = A.arena.overlaps;
    const found = [];
    if (!O) return found;
    for (let k = 0; k < O.output.length; k++) {
      const o = O.output[k];
      const i = O.input[k];
      const low = Math.max(view.offsets[o], view.offsets[i]);
      const high = Math.min(view.offsets[o] + A.B.size[o], view.offsets[i] + A.B.size[i]);
      const first = Math.max(A.B.first[o], A.B.first[i]);
      const last = Math.min(A.B.last[o], A.B.last[i]);
      if (low < high && first <= last) found.push([k, first, last, low, high]);
    }
    return found;
  }

  // The bound a view is judged against: the one with overlaps when it shares bytes.
  function lowerBoundFor(A, view) {
    const bound = A.arena.overlap_lower_bound;
    if (bound === null || bound === undefined) return A.arena.lower_bound;
    return sharedRegions(A, view).length ? bound : A.arena.lower_bound;
  }

  // ------------------------------------------------------------------------------------------
  // State

  const state = {
    mode: "report",
    r: 0,
    a: 0,
    p: 0,
    selected: -1,
    hover: -1,
    step: null,
    cursor: null,
    zoom: null,
    budget: DATA.reports[0].budget,
    filter: "",
    scope: "all",
    left: [0, 0],
    right: DATA.reports.length > 1 ? [1, 0] : [0, bestOther(0)],
    compareKey: null,
  };

  function bestOther(r) {
    const plans = DATA.reports[r].arenas[0].plans;
    let best = plans.length > 1 ? 1 : 0;
    for (let p = 1; p < plans.length; p++) {
      if (plans[p].arena_size < plans[best].arena_size) best = p;
    }
    return best;
  }

  let frame = 0;
  const views = [];
  function update(patch) {
    Object.assign(state, patch);
    if (!frame) {
      frame = requestAnimationFrame(() => {
        frame = 0;
        for (const view of views) view.update();
      });
    }
  }

  function current() {
    return arenaOf(state.r, state.a);
  }

  function plan(A, p) {
    return A.arena.plans[p === undefined ? state.p : p];
  }

  function selectTensor(i, origin) {
    update({ selected: state.selected === i && origin === "toggle" ? -1 : i });
    scrollTo(i);
  }

  // ------------------------------------------------------------------------------------------
  // Tooltip

  const tooltip = el("div", { id: "tooltip", role: "tooltip" });
  document.body.append(tooltip);

  function showTooltip(event, title, rows) {
    tooltip.replaceChildren(el("div", { class: "tt-title", text: title }));
    for (const [key, value] of rows) {
      tooltip.append(el("div", { class: "tt-row" }, [el("span", { text: key }), el("span", { text: value })]));
    }
    tooltip.style.display = "block";
    const pad = 14;
    const width = tooltip.offsetWidth;
    const height = tooltip.offsetHeight;
    let x = event.clientX + pad;
    let y = event.clientY + pad;
    if (x + width > window.innerWidth - 4) x = event.clientX - width - pad;
    if (y + height > window.innerHeight - 4) y = event.clientY - height - pad;
    tooltip.style.left = Math.max(4, x) + "px";
    tooltip.style.top = Math.max(4, y) + "px";
  }

  function hideTooltip() {
    tooltip.style.display = "none";
  }

  function tensorRows(A, i, p) {
    const B = A.B;
    const rows = [
      ["shape", A.B.dtype[i] === "-" ? shapeText(A, i) : shapeText(A, i) + "  " + B.dtype[i]],
      ["bytes", B.nbytes[i].toLocaleString("en-US") + " B" +
        (B.size[i] !== B.nbytes[i] ? " (planned " + B.size[i].toLocaleString("en-US") + " B)" : "") +
        "  \u00b7 " + formatBytes(B.size[i])],
      ["lifetime", "steps " + B.first[i] + "\u2013" + B.last[i]],
      ["written by", stepLabel(A, B.producer[i])],
      ["read by", B.consumers[i].length ? B.consumers[i].map((s) => stepLabel(A, s)).join(", ") : "-"],
    ];
    if (p !== null) {
      const offset = plan(A, p).offsets[i];
      rows.push(["offset", offset.toLocaleString("en-US") + " \u2013 " +
        (offset + B.size[i]).toLocaleString("en-US") + " (" + plan(A, p).planner + ")"]);
    }
    if (B.aliases[i].length) rows.push(["shares bytes with", B.aliases[i].join(", ")]);
    return rows;
  }

  // ------------------------------------------------------------------------------------------
  // Canvas charts

  class CanvasChart {
    constructor(parent, height) {
      this.canvas = el("canvas");
      parent.append(this.canvas);
      this.height = height;
      this.width = 600;
      this.observer = new ResizeObserver(() => this.resize());
      this.observer.observe(parent);
      this.resize();
    }

    resize() {
      const width = Math.max(200, this.canvas.parentElement.clientWidth);
      const ratio = window.devicePixelRatio || 1;
      this.width = width;
      this.canvas.width = Math.round(width * ratio);
      this.canvas.height = Math.round(this.height * ratio);
      this.canvas.style.height = this.height + "px";
      this.ratio = ratio;
      this.update();
    }

    context() {
      const ctx = this.canvas.getContext("2d");
      ctx.setTransform(this.ratio, 0, 0, this.ratio, 0, 0);
      ctx.clearRect(0, 0, this.width, this.height);
      ctx.font = "11px system-ui, -apple-system, 'Segoe UI', Roboto, 'DejaVu Sans', sans-serif";
      return ctx;
    }

    point(event) {
      const box = this.canvas.getBoundingClientRect();
      return [event.clientX - box.left, event.clientY - box.top];
    }

    update() {}
  }

  // The step axis shared by the memory map, live bytes and lifetimes (same margins → aligned).
  function stepRange(A) {
    if (state.zoom && state.mode === "report") return state.zoom;
    return [A.lowStep, A.highStep];
  }

  function stepX(chart, range, step) {
    const plotWidth = chart.width - MARGIN.left - MARGIN.right;
    return MARGIN.left + (step - range[0]) / (range[1] - range[0] + 1) * plotWidth;
  }

  function xStep(chart, range, x) {
    const plotWidth = chart.width - MARGIN.left - MARGIN.right;
    return Math.floor(range[0] + (x - MARGIN.left) / plotWidth * (range[1] - range[0] + 1));
  }

  function drawStepAxis(ctx, chart, range, y) {
    const span = range[1] - range[0] + 1;
    const step = Math.max(1, Math.round(niceStep(span, Math.max(2, Math.floor(chart.width / 90)))));
    ctx.fillStyle = cssColor("--muted");
    ctx.textAlign = "center";
    ctx.textBaseline = "top";
    const first = Math.ceil(range[0] / step) * step;
    for (let s = first; s <= range[1]; s += step) {
      const x = stepX(chart, range, s + 0.5);
      ctx.fillText(String(s), x, y + 4);
      ctx.fillRect(x, y, 1, 3);
    }
  }

  function drawByteAxis(ctx, chart, top, bottom, maxBytes, unit) {
    const span = maxBytes / unit.size;
    const step = niceStep(span, Math.max(2, Math.floor((bottom - top) / 45)));
    ctx.textAlign = "right";
    ctx.textBaseline = "middle";
    for (let v = 0; v <= span + 1e-9; v += step) {
      const y = bottom - v / span * (bottom - top);
      ctx.fillStyle = cssColor("--grid");
      ctx.fillRect(MARGIN.left, Math.round(y), chart.width - MARGIN.left - MARGIN.right, 1);
      ctx.fillStyle = cssColor("--muted");
      ctx.fillText(String(+v.toFixed(2)), MARGIN.left - 6, y);
    }
    ctx.save();
    ctx.translate(14, (top + bottom) / 2);
    ctx.rotate(-Math.PI / 2);
    ctx.textAlign = "center";
    ctx.fillText(unit.name, 0, 0);
    ctx.restore();
  }

  // A labelled horizontal line; place = "right-above" | "right-below" | "left-above".
  function horizontalLine(ctx, chart, y, color, dash, label, place) {
    ctx.save();
    ctx.strokeStyle = color;
    ctx.lineWidth = 1.5;
    ctx.setLineDash(dash);
    ctx.beginPath();
    ctx.moveTo(MARGIN.left, Math.round(y) + 0.5);
    ctx.lineTo(chart.width - MARGIN.right, Math.round(y) + 0.5);
    ctx.stroke();
    if (label) {
      const where = place || "right-above";
      const right = where.startsWith("right");
      const above = where.endsWith("above");
      ctx.setLineDash([]);
      ctx.font = "600 11px system-ui, sans-serif";
      ctx.textAlign = right ? "right" : "left";
      ctx.textBaseline = above ? "bottom" : "top";
      const x = right ? chart.width - MARGIN.right - 4 : MARGIN.left + 4;
      const ty = above ? y - 3 : y + 4;
      haloText(ctx, label, x, ty, color);
    }
    ctx.restore();
  }

  // Text with a white outline, readable over rectangles and lines.
  function haloText(ctx, text, x, y, color) {
    ctx.save();
    ctx.lineJoin = "round";
    ctx.lineWidth = 3;
    ctx.strokeStyle = "rgba(255,255,255,0.92)";
    ctx.strokeText(text, x, y);
    ctx.fillStyle = color;
    ctx.fillText(text, x, y);
    ctx.restore();
  }

  function stepBand(ctx, chart, range, step, top, bottom, color, alpha) {
    if (step === null || step < range[0] || step > range[1]) return;
    const x0 = stepX(chart, range, step);
    const x1 = stepX(chart, range, step + 1);
    ctx.save();
    ctx.globalAlpha = alpha;
    ctx.fillStyle = color;
    ctx.fillRect(x0, top, Math.max(1, x1 - x0), bottom - top);
    ctx.restore();
  }

  // ------------------------------------------------------------------------------------------
  // Memory map: one rectangle per buffer, steps × offsets

  class MemoryMap extends CanvasChart {
    // source: () => {A, p, range, maxBytes, highlight(i) → "selected" | "related" | "dim" | ""}
    constructor(parent, height, source, handlers) {
      super(parent, height);
      this.source = source;
      this.handlers = handlers;
      this.canvas.setAttribute("role", "img");
      this.canvas.addEventListener("mousemove", (event) => this.move(event));
      this.canvas.addEventListener("mouseleave", () => { hideTooltip(); this.handlers.hover(-1, null); });
      this.canvas.addEventListener("click", (event) => {
        const i = this.hit(...this.point(event));
        this.handlers.click(i, event);
      });
    }

    geometry() {
      if (!this.source) return null;  // called by the base constructor before source is set
      const info = this.source();
      if (!info) return null;
      const top = 22;
      const bottom = this.height - 26;
      return Object.assign(info, { top, bottom, yOf: (bytes) => bottom - bytes / info.maxBytes * (bottom - top) });
    }

    rect(g, i) {
      const B = g.A.B;
      const offset = plan(g.A, g.p).offsets[i];
      const x0 = stepX(this, g.range, B.first[i]);
      const x1 = stepX(this, g.range, B.last[i] + 1);
      const y1 = g.yOf(offset);
      const y0 = g.yOf(offset + B.size[i]);
      return [x0, y0, Math.max(1, x1 - x0), Math.max(1, y1 - y0)];
    }

    hit(x, y) {
      const g = this.geometry();
      if (!g) return -1;
      for (let i = g.A.n - 1; i >= 0; i--) {
        if (g.A.B.last[i] < g.range[0] || g.A.B.first[i] > g.range[1] || !g.A.B.size[i]) continue;
        const [rx, ry, rw, rh] = this.rect(g, i);
        if (x >= rx - 1 && x <= rx + rw + 1 && y >= ry - 1 && y <= ry + rh + 1) return i;
      }
      return -1;
    }

    move(event) {
      const [x, y] = this.point(event);
      const i = this.hit(x, y);
      const g = this.geometry();
      if (!g) return;
      this.handlers.hover(i, xStep(this, g.range, x));
      if (i >= 0) showTooltip(event, g.A.B.name[i], tensorRows(g.A, i, g.p));
      else hideTooltip();
    }

    center(i) {
      const g = this.geometry();
      const [x, y, w, h] = this.rect(g, i);
      const box = this.canvas.getBoundingClientRect();
      return { x: box.left + x + w / 2, y: box.top + y + h / 2 };
    }

    update() {
      const g = this.geometry();
      if (!g) return;
      const ctx = this.context();
      const { A, range } = g;
      const unit = byteUnit(g.maxBytes);
      const view = plan(A, g.p);
      drawByteAxis(ctx, this, g.top, g.bottom, g.maxBytes, unit);
      drawStepAxis(ctx, this, range, g.bottom);
      const peakStep = A.peakRow >= 0 ? A.S.step[A.peakRow] : null;
      stepBand(ctx, this, range, peakStep, g.top, g.bottom, cssColor("--peak"), 0.08);
      const room = budgetRoom(A);
      if (room !== null && room < g.maxBytes) {
        ctx.save();
        ctx.globalAlpha = 0.07;
        ctx.fillStyle = cssColor("--budget");
        ctx.fillRect(MARGIN.left, g.top, this.width - MARGIN.left - MARGIN.right, g.yOf(room) - g.top);
        ctx.restore();
      }
      let chosen = -1;
      ctx.save();
      ctx.beginPath();
      ctx.rect(MARGIN.left, g.top - 2, this.width - MARGIN.left - MARGIN.right, g.bottom - g.top + 2);
      ctx.clip();
      ctx.textAlign = "center";
      ctx.textBaseline = "middle";
      for (let i = 0; i < A.n; i++) {
        if (A.B.last[i] < range[0] || A.B.first[i] > range[1] || !A.B.size[i]) continue;
        const mark = g.highlight(i);
        if (mark === "selected") chosen = i;
        const [x, y, w, h] = this.rect(g, i);
        ctx.globalAlpha = mark === "dim" ? 0.22 : 0.92;
        ctx.fillStyle = PALETTE[i % PALETTE.length];
        ctx.fillRect(x, y, w, h);
        if (w > 4 && h > 4) {
          ctx.globalAlpha = mark === "dim" ? 0.3 : 1;
          ctx.strokeStyle = "#ffffff";
          ctx.lineWidth = 1;
          ctx.strokeRect(x + 0.5, y + 0.5, w - 1, h - 1);
        }
        if (mark === "related") {
          ctx.globalAlpha = 1;
          ctx.strokeStyle = cssColor("--peak");
          ctx.lineWidth = 2;
          ctx.strokeRect(x + 1, y + 1, w - 2, h - 2);
        }
        if (w > 34 && h > 14 && mark !== "dim") {
          const lines = labelLines(A.B.label[i] || A.B.name[i], Math.floor((w - 6) / 6.2), Math.floor((h - 2) / 13));
          if (lines.length < Math.floor((h - 2) / 13)) lines.push(formatBytes(A.B.size[i]));
          ctx.globalAlpha = 1;
          ctx.fillStyle = "#ffffff";
          lines.forEach((line, k) => ctx.fillText(line, x + w / 2, y + h / 2 + (k - (lines.length - 1) / 2) * 13));
        }
      }
      ctx.globalAlpha = 1;
      for (const [, first, last, low, high] of sharedRegions(A, view)) {
        if (last < range[0] || first > range[1]) continue;
        // Hatched: bytes the output writes over the input its operator is consuming.
        const x0 = stepX(this, range, first);
        const x1 = stepX(this, range, last + 1);
        const y0 = g.yOf(high);
        const y1 = g.yOf(low);
        ctx.save();
        ctx.beginPath();
        ctx.rect(x0, y0, x1 - x0, y1 - y0);
        ctx.clip();
        ctx.strokeStyle = cssColor("--select");
        ctx.globalAlpha = 0.75;
        ctx.lineWidth = 1;
        ctx.beginPath();
        for (let d = -(y1 - y0); d < x1 - x0; d += 6) {
          ctx.moveTo(x0 + d, y1);
          ctx.lineTo(x0 + d + (y1 - y0), y0);
        }
        ctx.stroke();
        ctx.restore();
        ctx.strokeStyle = cssColor("--select");
        ctx.lineWidth = 1.2;
        ctx.strokeRect(x0 + 0.5, y0 + 0.5, Math.max(1, x1 - x0 - 1), Math.max(1, y1 - y0 - 1));
      }
      this.canvas.dataset.shared = String(sharedRegions(A, view).length);
      const hovered = g.hovered === undefined ? -1 : g.hovered;
      if (hovered >= 0 && hovered !== chosen && A.B.size[hovered]) {
        const [x, y, w, h] = this.rect(g, hovered);
        ctx.strokeStyle = cssColor("--ink");
        ctx.lineWidth = 1.5;
        ctx.strokeRect(x - 0.5, y - 0.5, w + 1, h + 1);
      }
      if (chosen >= 0) {
        const [x, y, w, h] = this.rect(g, chosen);
        ctx.strokeStyle = cssColor("--select");
        ctx.lineWidth = 2.5;
        ctx.strokeRect(x - 1, y - 1, w + 2, h + 2);
      }
      ctx.restore();
      if (state.step !== null && state.mode === "report") {
        stepBand(ctx, this, range, state.step, g.top, g.bottom, cssColor("--accent"), 0.12);
      }
      if (state.cursor !== null && state.mode === "report") {
        stepBand(ctx, this, range, state.cursor, g.top, g.bottom, cssColor("--ink"), 0.06);
      }
      horizontalLine(ctx, this, g.yOf(view.arena_size), cssColor("--accent"), [],
        "arena " + formatBytes(view.arena_size));
      horizontalLine(ctx, this, g.yOf(A.arena.lower_bound), cssColor("--bound"), [2, 3],
        A.arena.lower_bound === view.arena_size ? "" : "lower bound " + formatBytes(A.arena.lower_bound), "left-above");
      const overlapBound = A.arena.overlap_lower_bound;
      if (overlapBound !== null && overlapBound !== undefined) {
        horizontalLine(ctx, this, g.yOf(overlapBound), cssColor("--bound"), [6, 2, 2, 2],
          overlapBound === view.arena_size ? "" : "with overlaps " + formatBytes(overlapBound), "left-below");
      }
      if (room !== null) {
        horizontalLine(ctx, this, g.yOf(room), cssColor("--budget"), [6, 4], budgetLabel(A), "right-below");
      }
      this.canvas.dataset.selected = String(chosen);
      this.canvas.dataset.planner = view.planner;
      this.canvas.setAttribute("aria-label", "memory map of " + view.planner + ": arena " + formatBytes(view.arena_size));
    }
  }

  // ------------------------------------------------------------------------------------------
  // Live bytes per step (one or two series)

  class LiveChart extends CanvasChart {
    // source: () => {series: [{A, p, color, label}], range, maxBytes}
    constructor(parent, height, source, handlers) {
      super(parent, height);
      this.source = source;
      this.handlers = handlers;
      this.drag = null;
      this.canvas.addEventListener("mousemove", (event) => this.move(event));
      this.canvas.addEventListener("mouseleave", () => { hideTooltip(); if (this.handlers.cursor) this.handlers.cursor(null); });
      this.canvas.addEventListener("mousedown", (event) => {
        const info = this.source();
        if (!info || !this.handlers.zoom) return;
        this.drag = { from: xStep(this, info.range, this.point(event)[0]), to: null };
      });
      window.addEventListener("mouseup", (event) => {
        if (!this.drag) return;
        const drag = this.drag;
        this.drag = null;
        const info = this.source();
        if (drag.to !== null && Math.abs(drag.to - drag.from) >= 2) {
          this.handlers.zoom([Math.max(Math.min(drag.from, drag.to), info.range[0]),
                              Math.min(Math.max(drag.from, drag.to), info.range[1])]);
        } else if (event.target === this.canvas && this.handlers.click) {
          this.handlers.click(drag.from);
        }
        this.update();
      });
    }

    move(event) {
      const info = this.source();
      if (!info) return;
      const step = xStep(this, info.range, this.point(event)[0]);
      if (this.drag) {
        this.drag.to = step;
        this.update();
        return;
      }
      if (this.handlers.cursor) this.handlers.cursor(step);
      const rows = [];
      for (const series of info.series) {
        const row = series.A.stepRow.get(step);
        if (row === undefined) continue;
        const prefix = info.series.length > 1 ? series.label + ": " : "";
        rows.push([prefix + "live", formatBytes(series.A.S.live_bytes[row]) + " (" +
          series.A.S.live_bytes[row].toLocaleString("en-US") + " B)"]);
        rows.push([prefix + "runs", stepLabel(series.A, step)]);
      }
      if (rows.length) showTooltip(event, "step " + step, rows);
      else hideTooltip();
    }

    update() {
      if (!this.source) return;  // called by the base constructor before source is set
      const info = this.source();
      if (!info) return;
      const ctx = this.context();
      const top = 16;
      const bottom = this.height - 26;
      const range = info.range;
      const unit = byteUnit(info.maxBytes);
      const yOf = (bytes) => bottom - bytes / info.maxBytes * (bottom - top);
      drawByteAxis(ctx, this, top, bottom, info.maxBytes, unit);
      drawStepAxis(ctx, this, range, bottom);
      const first = info.series[0];
      const peakStep = first.A.peakRow >= 0 ? first.A.S.step[first.A.peakRow] : null;
      stepBand(ctx, this, range, peakStep, top, bottom, cssColor("--peak"), 0.08);
      if (info.selected) {
        const { A, i } = info.selected;
        ctx.save();
        ctx.globalAlpha = 0.18;
        ctx.fillStyle = PALETTE[i % PALETTE.length];
        const x0 = stepX(this, range, A.B.first[i]);
        ctx.fillRect(x0, top, stepX(this, range, A.B.last[i] + 1) - x0, bottom - top);
        ctx.restore();
      }
      if (state.step !== null && state.mode === "report") stepBand(ctx, this, range, state.step, top, bottom, cssColor("--accent"), 0.14);
      if (state.cursor !== null && state.mode === "report") stepBand(ctx, this, range, state.cursor, top, bottom, cssColor("--ink"), 0.07);
      for (const series of info.series) {
        const S = series.A.S;
        ctx.save();
        ctx.beginPath();
        ctx.rect(MARGIN.left, 0, this.width - MARGIN.left - MARGIN.right, this.height);
        ctx.clip();
        ctx.beginPath();
        let started = false;
        for (let row = 0; row < S.step.length; row++) {
          const step = S.step[row];
          if (step < range[0] - 1 || step > range[1] + 1) continue;
          const x0 = stepX(this, range, step);
          const x1 = stepX(this, range, step + 1);
          const y = yOf(S.live_bytes[row]);
          if (!started) { ctx.moveTo(x0, y); started = true; } else ctx.lineTo(x0, y);
          ctx.lineTo(x1, y);
        }
        ctx.strokeStyle = series.color;
        ctx.lineWidth = 1.6;
        if (series.dash) ctx.setLineDash(series.dash);
        ctx.stroke();
        ctx.setLineDash([]);
        if (info.series.length === 1 && started) {
          ctx.lineTo(stepX(this, range, Math.min(range[1], S.step[S.step.length - 1]) + 1), bottom);
          ctx.lineTo(stepX(this, range, Math.max(range[0], S.step[0])), bottom);
          ctx.closePath();
          ctx.globalAlpha = 0.2;
          ctx.fillStyle = series.color;
          ctx.fill();
        }
        ctx.restore();
      }
      if (info.series.length === 1) {
        const { A, p } = first;
        const view = plan(A, p);
        horizontalLine(ctx, this, yOf(view.arena_size), cssColor("--accent"), [], "arena " + formatBytes(view.arena_size));
        horizontalLine(ctx, this, yOf(A.arena.lower_bound), cssColor("--bound"), [2, 3],
          A.arena.lower_bound === view.arena_size ? "" : "lower bound " + formatBytes(A.arena.lower_bound), "left-above");
        const room = budgetRoom(A);
        if (room !== null) horizontalLine(ctx, this, yOf(room), cssColor("--budget"), [6, 4], budgetLabel(A), "right-below");
        if (A.peakRow >= 0 && peakStep >= range[0] && peakStep <= range[1]) {
          const x = stepX(this, range, peakStep + 0.5);
          const y = yOf(A.S.live_bytes[A.peakRow]);
          ctx.fillStyle = cssColor("--peak");
          ctx.beginPath();
          ctx.arc(x, y, 4, 0, 2 * Math.PI);
          ctx.fill();
          ctx.font = "600 11px system-ui, sans-serif";
          const label = "peak " + formatBytes(A.S.live_bytes[A.peakRow]) + " \u00b7 " + stepLabel(A, peakStep);
          const right = x > this.width * 0.6;
          ctx.textAlign = right ? "right" : "left";
          ctx.textBaseline = "top";
          haloText(ctx, label, x + (right ? -8 : 8), y + 4, cssColor("--peak"));
        }
      }
      if (this.drag && this.drag.to !== null) {
        const lo = Math.min(this.drag.from, this.drag.to);
        const hi = Math.max(this.drag.from, this.drag.to);
        ctx.save();
        ctx.globalAlpha = 0.15;
        ctx.fillStyle = cssColor("--accent");
        ctx.fillRect(stepX(this, range, lo), top, stepX(this, range, hi + 1) - stepX(this, range, lo), bottom - top);
        ctx.restore();
      }
    }
  }

  // ------------------------------------------------------------------------------------------
  // Lifetimes: one bar per buffer, virtual scrolling through a sticky canvas

  class LifetimeChart {
    constructor(parent) {
      this.scroller = el("div", { class: "scroller" });
      this.spacer = el("div");
      parent.append(this.scroller);
      this.chart = new CanvasChart(this.scroller, 320);
      this.scroller.append(this.spacer);
      this.chart.update = () => this.update();
      this.scrollTop = 0;  // cached for the same reason as VirtualTable.scrollTop
      this.scroller.addEventListener("scroll", () => { this.scrollTop = this.scroller.scrollTop; this.update(); });
      this.canvas = this.chart.canvas;
      this.canvas.addEventListener("mousemove", (event) => this.move(event));
      this.canvas.addEventListener("mouseleave", () => { hideTooltip(); update({ hover: -1, cursor: null }); });
      this.canvas.addEventListener("click", (event) => {
        const i = this.hit(event);
        if (i >= 0) selectTensor(i, "toggle");
      });
    }

    layout() {
      const A = current();
      this.rowHeight = A.n <= 60 ? 16 : A.n <= 400 ? 8 : 5;
      const total = A.n * this.rowHeight + 30;
      const height = Math.min(Math.max(total, 120), 340);
      if (this.chart.height !== height) {
        this.chart.height = height;
        this.chart.resize();
      }
      this.scroller.style.height = height + "px";
      this.spacer.style.height = Math.max(0, total - height) + "px";
      return A;
    }

    hit(event) {
      const A = current();
      const [x, y] = this.chart.point(event);
      const row = Math.floor((y - 8 + this.scrollTop) / this.rowHeight);
      if (row < 0 || row >= A.n) return -1;
      const i = A.byFirst[row];
      const range = stepRange(A);
      const x0 = stepX(this.chart, range, A.B.first[i]);
      const x1 = stepX(this.chart, range, A.B.last[i] + 1);
      return x >= x0 - 4 && x <= x1 + 4 ? i : -1;
    }

    move(event) {
      const A = current();
      const i = this.hit(event);
      const step = xStep(this.chart, stepRange(A), this.chart.point(event)[0]);
      update({ hover: i, cursor: step });
      if (i >= 0) showTooltip(event, A.B.name[i], tensorRows(A, i, state.p));
      else hideTooltip();
    }

    scrollToTensor(i) {
      const A = current();
      const y = A.lifetimeRow[i] * this.rowHeight;
      const view = this.chart.height - 30;
      if (y < this.scrollTop || y > this.scrollTop + view) {
        this.scrollTop = Math.max(0, y - view / 2);
        this.scroller.scrollTop = this.scrollTop;
      }
    }

    update() {
      const A = this.layout();
      const chart = this.chart;
      const ctx = chart.context();
      const range = stepRange(A);
      const top = 8;
      const bottom = chart.height - 22;
      const scroll = this.scrollTop;
      const peakStep = A.peakRow >= 0 ? A.S.step[A.peakRow] : null;
      stepBand(ctx, chart, range, peakStep, top, bottom, cssColor("--peak"), 0.08);
      if (state.step !== null) stepBand(ctx, chart, range, state.step, top, bottom, cssColor("--accent"), 0.14);
      if (state.cursor !== null) stepBand(ctx, chart, range, state.cursor, top, bottom, cssColor("--ink"), 0.06);
      const firstRow = Math.max(0, Math.floor(scroll / this.rowHeight));
      const lastRow = Math.min(A.n - 1, Math.ceil((scroll + bottom - top) / this.rowHeight));
      const selection = state.selected;
      const related = relatedSet(A);
      ctx.save();
      ctx.beginPath();
      ctx.rect(MARGIN.left, top, chart.width - MARGIN.left - MARGIN.right, bottom - top);
      ctx.clip();
      ctx.textBaseline = "middle";
      for (let row = firstRow; row <= lastRow; row++) {
        const i = A.byFirst[row];
        const y = top + row * this.rowHeight - scroll;
        const x0 = stepX(chart, range, A.B.first[i]);
        const x1 = stepX(chart, range, A.B.last[i] + 1);
        const dim = (selection >= 0 || related) && i !== selection && !(related && related.has(i));
        ctx.globalAlpha = dim ? 0.25 : 0.95;
        ctx.fillStyle = PALETTE[i % PALETTE.length];
        const barHeight = Math.max(1, this.rowHeight - (this.rowHeight > 6 ? 3 : 1));
        ctx.fillRect(x0, y, Math.max(1.5, x1 - x0), barHeight);
        if (i === selection) {
          ctx.globalAlpha = 1;
          ctx.strokeStyle = cssColor("--select");
          ctx.lineWidth = 2;
          ctx.strokeRect(x0 - 1, y - 1, Math.max(1.5, x1 - x0) + 2, barHeight + 2);
        }
        if (this.rowHeight >= 14) {
          ctx.globalAlpha = dim ? 0.4 : 1;
          ctx.fillStyle = cssColor("--ink");
          const label = shortLabel(A.B.name[i], 36) + "  " + formatBytes(A.B.size[i]);
          const width = ctx.measureText(label).width;
          ctx.textAlign = "left";
          // Right of the bar, else left of it, else inside it (a bar spanning every step).
          if (x1 + 6 + width < chart.width - MARGIN.right) ctx.fillText(label, x1 + 6, y + barHeight / 2);
          else if (x0 - 6 - width > MARGIN.left) ctx.fillText(label, x0 - 6 - width, y + barHeight / 2);
          else {
            ctx.fillStyle = "#ffffff";
            ctx.fillText(label, x0 + 6, y + barHeight / 2);
          }
        }
      }
      ctx.restore();
      drawStepAxis(ctx, chart, range, bottom);
      ctx.fillStyle = cssColor("--muted");
      ctx.textAlign = "left";
      ctx.textBaseline = "top";
      ctx.fillText(A.n + " buffers", 4, top);
      ctx.fillText("by first step", 4, top + 14);
      this.canvas.dataset.selected = String(selection);
    }
  }

  // Buffers related to the selected step (read or written by its operator).
  function relatedSet(A) {
    if (state.step === null) return null;
    const row = A.stepRow.get(state.step);
    if (row === undefined) return null;
    return new Set([...A.S.reads[row], ...A.S.writes[row]]);
  }

  // ------------------------------------------------------------------------------------------
  // Virtual table: only visible rows exist in the DOM

  class VirtualTable {
    constructor(parent, options) {
      this.options = options;
      this.columns = options.columns;
      this.template = this.columns.map((c) => c.width).join(" ");
      this.sortKey = options.sortKey;
      this.sortDir = options.sortDir;
      this.rows = [];
      this.root = el("div", { class: "vtable" });
      this.head = el("div", { class: "vhead", role: "row" });
      this.head.style.gridTemplateColumns = this.template;
      this.columns.forEach((column) => {
        const cell = el("span", { text: column.label, class: column.num ? "num" : "", title: column.title || column.label, role: "columnheader" });
        cell.addEventListener("click", () => {
          if (this.sortKey === column.key) this.sortDir = -this.sortDir;
          else { this.sortKey = column.key; this.sortDir = column.num ? -1 : 1; }
          this.refresh();
        });
        column.headCell = cell;
        this.head.append(cell);
      });
      this.body = el("div", { class: "vbody", role: "rowgroup" });
      this.body.style.height = options.height + "px";
      this.spacer = el("div");
      this.body.append(this.spacer);
      // Scroll position is cached from scroll events: reading scrollTop while other views are
      // writing to the DOM would force a full layout on every redraw.
      this.scrollTop = 0;
      this.body.addEventListener("scroll", () => { this.scrollTop = this.body.scrollTop; this.paint(); });
      this.root.append(this.head, this.body);
      parent.append(this.root);
      this.pool = [];
      this.version = 0;
    }

    refresh() {
      const rows = this.options.rows();
      const column = this.columns.find((c) => c.key === this.sortKey);
      if (column) {
        const dir = this.sortDir;
        const value = column.sort || column.value;
        const compare = column.compare || ((x, y) => {
          const a = value(x);
          const b = value(y);
          return a < b ? -1 : a > b ? 1 : 0;
        });
        rows.sort((x, y) => dir * compare(x, y) || x - y);  // ties keep row order: deterministic
      }
      this.rows = rows;
      this.version += 1;  // row contents are stale: paint rebuilds them
      for (const c of this.columns) {
        if (c.key === this.sortKey) c.headCell.dataset.sort = this.sortDir > 0 ? "\u25b2" : "\u25bc";
        else delete c.headCell.dataset.sort;
      }
      this.spacer.style.height = rows.length * ROW + "px";
      const limit = Math.max(0, rows.length * ROW - this.options.height);
      if (this.scrollTop > limit) { this.scrollTop = limit; this.body.scrollTop = limit; }
      this.paint();
    }

    paint() {
      const top = this.scrollTop;
      const first = Math.max(0, Math.floor(top / ROW) - 4);
      const last = Math.min(this.rows.length, Math.ceil((top + this.options.height) / ROW) + 4);
      let used = 0;
      for (let position = first; position < last; position++) {
        const index = this.rows[position];
        let row = this.pool[used];
        if (!row) {
          row = el("div", { class: "vrow", role: "row", tabindex: "0" });
          row.addEventListener("keydown", (event) => {
            if (event.key === "Enter" || event.key === " ") { event.preventDefault(); row.click(); }
          });
          row.style.gridTemplateColumns = this.template;
          row.addEventListener("click", () => this.options.click(Number(row.dataset.index)));
          row.addEventListener("mouseenter", () => this.options.hover && this.options.hover(Number(row.dataset.index)));
          this.body.append(row);
          this.pool.push(row);
        }
        row.style.display = "";
        row.style.top = position * ROW + "px";
        const mark = this.options.mark ? this.options.mark(index) : "";
        row.className = "vrow" + (mark ? " " + mark : "");
        // Rebuild cells only when the row shows another tensor or the data changed: a redraw on
        // every hover would replace the element under a pressed mouse button and lose the click.
        const stamp = index + ":" + this.version;
        if (row.dataset.stamp !== stamp) {
          row.dataset.stamp = stamp;
          row.dataset.index = String(index);
          row.replaceChildren(...this.columns.map((c) => {
            const content = c.render ? c.render(index) : String(c.value(index));
            const cell = el("span", { class: (c.num ? "num " : "") + (c.cls || "") });
            if (content instanceof Node) cell.append(content);
            else { cell.textContent = content; cell.title = content; }
            return cell;
          }));
        }
        used++;
      }
      for (let k = used; k < this.pool.length; k++) this.pool[k].style.display = "none";
    }

    scrollToIndex(index) {
      const position = this.rows.indexOf(index);
      if (position < 0) return;
      const y = position * ROW;
      if (y < this.scrollTop || y > this.scrollTop + this.options.height - ROW) {
        this.scrollTop = Math.max(0, y - this.options.height / 2);
        this.body.scrollTop = this.scrollTop;
      }
      this.paint();
    }
  }

  // ------------------------------------------------------------------------------------------
  // Report mode

  let mapView = null;
  let lifetimeView = null;
  let tensorTable = null;
  let opTable = null;

  function scrollTo(i) {
    if (i < 0) return;
    if (tensorTable) tensorTable.scrollToIndex(i);
    if (lifetimeView) lifetimeView.scrollToTensor(i);
  }

  function highlightFor(A) {
    const related = relatedSet(A);
    return (i) => {
      if (i === state.selected) return "selected";
      if (related && related.has(i)) return "related";
      if (state.selected >= 0 || related) return "dim";
      return "";
    };
  }

  function mapMaximum(A, plans) {
    let top = A.arena.lower_bound;
    for (const p of plans) top = Math.max(top, plan(A, p).arena_size);
    const room = budgetRoom(A);
    if (room !== null) top = Math.max(top, room);
    return Math.max(1, top) * 1.06;
  }

  function buildReport(app) {
    const A = current();
    app.append(toolbar(A), cards());
    const guidance = nextStepsPanel();
    if (guidance) app.append(guidance);
    const grid = el("div", { class: "grid" });
    const left = el("div", { class: "stack" });
    const right = el("div", { class: "stack" });
    grid.append(left, right);
    app.append(grid);

    const mapPanel = panel("Memory map", "arena offset × step; hover for details, click to select");
    left.append(mapPanel.root);
    const mapBox = el("div", { class: "chart", id: "memory-map" });
    mapPanel.body.append(mapBox, legend());
    mapView = new MemoryMap(mapBox, 380, () => {
      const A = current();
      return { A, p: state.p, range: stepRange(A), maxBytes: mapMaximum(A, [state.p]), highlight: highlightFor(A), hovered: state.hover };
    }, {
      hover: (i, step) => update({ hover: i, cursor: step }),
      click: (i) => { if (i >= 0) selectTensor(i, "toggle"); else update({ selected: -1 }); },
    });
    views.push(mapView);

    const livePanel = panel("Live bytes per step", "drag to zoom into steps, click a step to select its operator");
    const reset = el("button", { class: "small", text: "reset zoom", onclick: () => update({ zoom: null }) });
    livePanel.head.append(reset);
    left.append(livePanel.root);
    const liveBox = el("div", { class: "chart", id: "live-bytes" });
    livePanel.body.append(liveBox);
    const liveView = new LiveChart(liveBox, 200, () => {
      const A = current();
      const selected = state.selected >= 0 ? { A, i: state.selected } : null;
      return { series: [{ A, p: state.p, color: PALETTE[0], label: "" }], range: stepRange(A),
               maxBytes: mapMaximum(A, [state.p]), selected };
    }, {
      cursor: (step) => update({ cursor: step }),
      click: (step) => selectStep(step),
      zoom: (range) => update({ zoom: range }),
    });
    views.push(liveView);
    views.push({ update: () => { reset.style.visibility = state.zoom ? "visible" : "hidden"; } });

    const lifePanel = panel("Lifetimes", "one bar per buffer, from the step that writes it to the last that reads it");
    left.append(lifePanel.root);
    const lifeBox = el("div", { class: "chart", id: "lifetimes" });
    lifePanel.body.append(lifeBox);
    lifetimeView = new LifetimeChart(lifeBox);
    views.push(lifetimeView);

    const tablePanel = panel("Tensors", "");
    left.append(tablePanel.root);
    buildTensorTable(tablePanel);

    const details = panel("Details", "");
    details.root.classList.add("details");
    details.root.id = "details";
    right.append(details.root);
    views.push(onChange(() => [state.r, state.a, state.p, state.selected, state.step].join("|"),
      () => renderDetails(details.body)));

    const ops = panel("Operators", "click to see what it reads and writes");
    ops.root.id = "ops";
    right.append(ops.root);
    buildOpTable(ops);

    const sizes = inputPanel();
    if (sizes) right.append(sizes);

    const plansPanel = panel("Plans", "arena per planner for this model");
    right.append(plansPanel.root);
    views.push(onChange(() => [state.r, state.a, state.p].join("|"), () => renderPlans(plansPanel.body)));
  }

  // A view that re-renders only when key() changes: panels with buttons must not be rebuilt on
  // every hover, or a click in progress would land on a removed element.
  function onChange(key, render) {
    let last = null;
    return { update: () => {
      const now = key();
      if (now !== last) { last = now; render(); }
    } };
  }

  function panel(title, hint) {
    const head = el("div", { class: "panel-head" }, [el("h2", { text: title }), hint ? el("span", { class: "hint", text: hint }) : null]);
    const body = el("div");
    const root = el("section", { class: "panel" }, [head, body]);
    return { root, head, body };
  }

  function legend() {
    const key = (cls, color, text) => {
      const swatch = el("span", { class: "key " + cls });
      swatch.style.borderTopColor = color;
      if (cls === "band") swatch.style.background = color;
      return el("span", null, [swatch, text]);
    };
    return el("div", { class: "legend" }, [
      key("", cssColor("--accent"), "arena size"),
      key("dotted", cssColor("--bound"), "lower bound (bytes live at the busiest step)"),
      key("dashed", cssColor("--budget"), "budget, minus what the runtime needs outside this arena"),
      key("band", cssColor("--peak"), "peak step"),
      ...(DATA.reports.some((report) => report.arenas.some((arena) => arena.overlaps && arena.overlaps.output.length))
        ? [key("hatch", cssColor("--select"), "output written over the input its operator consumes")]
        : []),
    ]);
  }

  // Another model or arena: its first plan, nothing selected, no zoom; the page is rebuilt.
  function switchView(patch) {
    Object.assign(state, { p: 0, selected: -1, hover: -1, step: null, cursor: null, zoom: null }, patch);
    rebuild();
  }

  function toolbar(A) {
    const bar = el("div", { class: "toolbar" });
    const tabs = el("div", { class: "tabs", role: "tablist" });
    for (const [mode, text] of [["report", "Report"], ["compare", "Compare"]]) {
      tabs.append(el("button", { text, "aria-pressed": String(state.mode === mode), id: "mode-" + mode,
        onclick: () => { state.mode = mode; rebuild(); } }));
    }
    bar.append(tabs);
    if (DATA.reports.length > 1) {
      const select = el("select", { id: "model-select",
        onchange: (e) => switchView({ r: Number(e.target.value), a: 0 }) });
      DATA.reports.forEach((report, r) => select.append(el("option", { value: String(r), text: report.model })));
      select.value = String(state.r);
      bar.append(el("label", null, ["model", select]));
    }
    if (A.report.arenas.length > 1) {
      const select = el("select", { id: "arena-select",
        onchange: (e) => switchView({ a: Number(e.target.value) }) });
      A.report.arenas.forEach((arena, a) => select.append(el("option", { value: String(a), text: arena.name })));
      select.value = String(state.a);
      bar.append(el("label", null, ["arena", select]));
    }
    const planners = el("div", { class: "segmented", id: "planners", role: "group", "aria-label": "planner" });
    A.arena.plans.forEach((view, p) => {
      const label = view.planner + (view.is_runtime ? " \u2605" : "");
      const size = el("span", { class: "size", text: formatBytes(view.arena_size) });
      const button = el("button", { dataset: { planner: view.planner }, onclick: () => update({ p }),
        title: view.is_runtime ? "the runtime's own planner" : "" }, [label, size]);
      planners.append(button);
    });
    views.push({ update: () => planners.querySelectorAll("button").forEach(
      (button, p) => button.setAttribute("aria-pressed", String(p === state.p))) });
    bar.append(el("label", null, ["planner", planners]));
    bar.append(budgetInput());
    return bar;
  }

  // "96 KiB" when that reads back as the same number of bytes, else the exact byte count.
  function budgetText(budget) {
    if (budget === null) return "";
    const short = formatBytes(budget);
    return parseSize(short) === budget ? short : String(budget);
  }

  function budgetLabel(A) {
    const view = plan(A);
    const other = requiredWith(A, view) - view.arena_size;
    const text = "budget " + formatBytes(state.budget);
    return other ? text + " \u2212 " + formatBytes(other) + " outside this arena" : text;
  }

  function budgetInput() {
    const input = el("input", { type: "text", id: "budget", placeholder: "e.g. 320KB", size: "10",
      value: budgetText(state.budget), title: "bytes, or 320KB = 320K = 320KiB (1,024 bytes each), 0.5MB" });
    const message = el("span", { class: "budget-message", id: "budget-message", role: "status", "aria-live": "polite" });
    const echo = (text, value) => {
      message.classList.toggle("error", text !== "" && value === null);
      if (text === "") message.textContent = "";
      else if (value === null) message.textContent = "can't read '" + text + "': try 320KB, 0.5MB or 307200";
      else message.textContent = "= " + value.toLocaleString("en-US") + " B";
    };
    input.addEventListener("input", () => {
      const text = input.value.trim();
      const value = text === "" ? null : parseSize(text);
      input.classList.toggle("invalid", text !== "" && value === null);
      echo(text, value);
      if (text === "" || value !== null) update({ budget: value });
    });
    return el("label", null, ["budget", input, message]);
  }

  function card(id, label) {
    const value = el("div", { class: "value" });
    const note = el("div", { class: "note" });
    const root = el("div", { class: "card", id }, [el("div", { class: "label", text: label }), value, note]);
    return { root, value, note };
  }

  // The number to declare with plan p of the primary arena: computed per plan by the report when
  // it could be, else that arena plus what the runtime needs outside it.
  function requiredWith(A, view) {
    if (A.a === 0 && view.required_bytes !== null && view.required_bytes !== undefined) return view.required_bytes;
    return view.arena_size + otherBytes(A);
  }

  function partsText(A, view, required) {
    const declare = A.report.declare;
    if (!declare || A.report.runtime !== "tflm") {
      return view.arena_size === required ? "" : "arena " + formatBytes(view.arena_size) + " + " +
        formatBytes(required - view.arena_size) + " in the other arenas";
    }
    if (view.is_runtime && A.a === 0) {
      const parts = declare.parts.map((part) => part.name + " " + formatBytes(part.bytes));
      return parts.join(" + ") + (parts.length > 1 ? ", all inside the tensor arena" : "");
    }
    return "head " + formatBytes(view.arena_size) + " + tail and setup " +
      formatBytes(required - view.arena_size) + ", all inside the tensor arena";
  }

  function optimizeCommand(A, view) {
    const base = "arenalens optimize " + A.report.model_argument + " -o optimized.tflite";
    // The plan with overlaps is named '<planner>+overlaps'; optimize writes it with --overlap.
    if (view.planner.endsWith("+overlaps")) return base + " --overlap";
    return base + " --planner " + view.planner;
  }

  function cards() {
    const box = el("div", { class: "cards" });
    const declare = card("card-declare", DATA.reports[state.r].declare ? DATA.reports[state.r].declare.symbol : "to declare");
    declare.root.classList.add("lead");
    const fit = card("card-fit", "fits?");
    const arena = card("card-arena", "arena");
    const bound = card("card-bound", "lower bound");
    const overhead = card("card-overhead", "overhead");
    const reuse = card("card-reuse", "without reuse");
    const peak = card("card-peak", "peak");
    box.append(declare.root, fit.root, arena.root, bound.root, overhead.root, reuse.root, peak.root);
    const notes = el("div", { class: "notes", id: "arena-notes" });
    views.push({ update: () => {
      const A = current();
      const view = plan(A);
      const lower = lowerBoundFor(A, view);
      const required = requiredWith(A, view);
      const runtimePlan = view.is_runtime;
      const status = A.report.declare ? A.report.declare.status : "exact";
      const statusWords = { "cannot-run": "cannot run", "placeholder-shape": "placeholder input shape" };
      declare.value.textContent = status === "cannot-run" ? "cannot run" :
        formatBytes(required) + (status === "placeholder-shape" ? " (placeholder input shape)" : status !== "exact" ? " (estimate)" : "");
      const where = required.toLocaleString("en-US") + " B \u00b7 " + partsText(A, view, required);
      declare.note.textContent = status in statusWords ? A.report.declare.reasons.join(" \u00b7 ") : runtimePlan ? where :
        where + " \u00b7 with '" + view.planner + "', which applies after `" + optimizeCommand(A, view) + "`";
      declare.root.className = "card lead" + (status in statusWords ? " bad" : runtimePlan ? "" : " pending");
      const verdict = A.report.verdict;
      if (status in statusWords) {
        // No arena size answers "does it fit" when the runtime cannot run the model, or when
        // the plan is for a placeholder input size.
        fit.value.textContent = statusWords[status];
        fit.note.textContent = status === "cannot-run" ? "no arena size works: see why on the left" :
          "give the real input size: --input-shape NAME=SHAPE";
        fit.root.className = "card bad";
      } else if (state.budget === null) {
        fit.value.textContent = "no budget";
        fit.note.textContent = "type a budget above, or run `arenalens report " + A.report.model_argument + " --target NAME`";
        fit.root.className = "card";
      } else {
        const margin = state.budget - required;
        const boardText = verdict && state.budget === A.report.budget ? verdict.where : formatBytes(state.budget) + " budget";
        fit.value.textContent = margin >= 0 ? "fits" : "over by " + formatBytes(-margin);
        let after = "";
        if (margin < 0 && runtimePlan && verdict && state.budget === A.report.budget && verdict.fits_after_optimize) {
          after = " \u00b7 fits after `arenalens optimize`" +
            (verdict.optimized_bytes ? " (" + formatBytes(verdict.optimized_bytes) + ")" : "");
        }
        fit.note.textContent = boardText + (margin >= 0 ? ": " + formatBytes(margin) + " to spare" : "") +
          (runtimePlan ? "" : " (after optimize)") + after;
        fit.root.className = "card " + (margin >= 0 ? "good" : "bad");
      }
      arena.value.textContent = formatBytes(view.arena_size);
      arena.note.textContent = view.planner + (view.is_runtime ? " (the runtime's planner)" : "") +
        " \u00b7 '" + A.arena.name + "' \u00b7 " + view.arena_size.toLocaleString("en-US") + " B";
      bound.value.textContent = formatBytes(lower);
      const overlapBound = A.arena.overlap_lower_bound;
      if (overlapBound === null || overlapBound === undefined) {
        bound.note.textContent = "bytes live at the busiest step; no layout can use less";
      } else {
        bound.note.textContent = formatBytes(A.arena.lower_bound) + " sharing no bytes; " +
          formatBytes(overlapBound) + " when outputs may slide over consumed inputs (" +
          sharedRegions(A, view).length + " shared in this plan)";
      }
      const gap = view.arena_size - lower;
      if (gap < 0) {
        // Only fixed (offline-planned) buffers may share bytes while live: no bound holds.
        overhead.value.textContent = "\u2212" + formatBytes(-gap);
        overhead.note.textContent = "below the bound: fixed offsets share bytes on purpose";
      } else {
        overhead.value.textContent = gap === 0 ? "0 B" : formatBytes(gap);
        overhead.note.textContent = gap === 0 ? "this plan meets the lower bound" : percent(gap, lower) + " above the lower bound";
      }
      overhead.root.className = "card " + (gap === 0 ? "good" : "");
      reuse.value.textContent = formatBytes(A.arena.no_reuse_bytes);
      reuse.note.textContent = "reuse saves " + formatBytes(A.arena.no_reuse_bytes - view.arena_size) + " (" +
        percent(A.arena.no_reuse_bytes - view.arena_size, A.arena.no_reuse_bytes) + ")";
      if (A.peakRow >= 0) {
        const step = A.S.step[A.peakRow];
        peak.value.textContent = formatBytes(A.S.live_bytes[A.peakRow]);
        peak.note.textContent = "step " + step + ": " + stepLabel(A, step) + " \u00b7 " + liveAt(A, step).length + " buffers live";
      } else {
        peak.value.textContent = "-";
      }
      const device = A.report.declare && A.report.declare.device ? ["Figure for: " + A.report.declare.device] : [];
      const reasonPrefix = { "cannot-run": "Cannot run: ", "placeholder-shape": "Unknown input size: " }[status] || "Estimate: ";
      const reasons = A.report.declare ? A.report.declare.reasons.map((r) => reasonPrefix + r) : [];
      notes.replaceChildren(...[...device, ...reasons, ...A.arena.notes.map((note) => "Note: " + note)]
        .map((text) => el("div", { text })));
    } });
    return el("div", null, [box, notes]);
  }

  // What to do next: the report's steps (commands to paste), then the diagnose findings.
  function nextStepsPanel() {
    const report = DATA.reports[state.r];
    if (!report.next_steps.length && !report.findings.length) return null;
    const section = panel("What to do next", report.findings.length ? report.findings.length + " findings from arenalens diagnose" : "");
    section.root.id = "next-steps";
    const steps = el("ol", { class: "steps" });
    for (const step of report.next_steps) steps.append(el("li", { text: step }));
    section.body.append(steps);
    const shown = report.findings.slice(0, 8);
    const list = el("div", { class: "findings" });
    for (const finding of shown) {
      const saves = finding.saving_bytes ? " \u00b7 saves " + finding.saving_bytes.toLocaleString("en-US") + " B" : "";
      list.append(el("div", { class: "finding " + finding.severity }, [
        el("div", { class: "finding-head" }, [
          el("span", { class: "severity", text: finding.severity }),
          el("b", { text: finding.rule }),
          el("span", { class: "where", text: finding.where }),
        ]),
        el("div", { text: finding.message }),
        el("div", { class: "fix", text: "fix: " + finding.fix + saves }),
      ]));
    }
    if (report.findings.length > shown.length) {
      list.append(el("div", { class: "count", text: (report.findings.length - shown.length) +
        " more: arenalens diagnose " + report.model_argument }));
    }
    section.body.append(list);
    return section.root;
  }

  // --max-input: the number to declare against the input height, with the budget.
  class InputChart extends CanvasChart {
    constructor(parent, report) {
      super(parent, 220);
      this.report = report;
      this.update();
    }

    update() {
      if (!this.report) return;  // called by the base constructor before report is set
      const ctx = this.context();
      const sizes = this.report.input_sizes.filter((s) => s.required_bytes !== null);
      if (!sizes.length) return;
      const top = 16;
      const bottom = this.height - 30;
      const room = state.budget;
      const maxBytes = Math.max(...sizes.map((s) => s.required_bytes), room || 0) * 1.08;
      const heights = sizes.map((s) => s.height);
      const span = Math.max(...heights) - Math.min(...heights) || 1;
      const low = Math.max(0, Math.min(...heights) - span * 0.05);
      const high = Math.max(...heights) + span * 0.05;
      const xOf = (h) => MARGIN.left + (h - low) / (high - low) * (this.width - MARGIN.left - MARGIN.right);
      const yOf = (b) => bottom - b / maxBytes * (bottom - top);
      drawByteAxis(ctx, this, top, bottom, maxBytes, byteUnit(maxBytes));
      ctx.fillStyle = cssColor("--muted");
      ctx.textAlign = "center";
      ctx.textBaseline = "top";
      const tick = Math.max(1, Math.round(niceStep(high - low, Math.max(2, Math.floor(this.width / 80)))));
      for (let h = Math.ceil(low / tick) * tick; h <= high; h += tick) {
        ctx.fillText(String(h), xOf(h), bottom + 4);
        ctx.fillRect(xOf(h), bottom, 1, 3);
      }
      ctx.fillText("input height (width keeps the aspect ratio)", (MARGIN.left + this.width) / 2, bottom + 16);
      ctx.strokeStyle = cssColor("--accent");
      ctx.lineWidth = 1.6;
      ctx.beginPath();
      sizes.forEach((s, k) => { if (k) ctx.lineTo(xOf(s.height), yOf(s.required_bytes)); else ctx.moveTo(xOf(s.height), yOf(s.required_bytes)); });
      ctx.stroke();
      for (const s of sizes) {
        ctx.fillStyle = s.fits ? cssColor("--good") : cssColor("--bad");
        ctx.beginPath();
        ctx.arc(xOf(s.height), yOf(s.required_bytes), 3.5, 0, 2 * Math.PI);
        ctx.fill();
      }
      if (room !== null) horizontalLine(ctx, this, yOf(room), cssColor("--budget"), [6, 4], "available " + formatBytes(room), "right-below");
      const best = this.report.max_input_shape;
      if (best) {
        const match = sizes.find((s) => s.shape.join("x") === best.join("x"));
        if (match) {  // a ring around the largest size that fits (the panel's hint names it)
          ctx.strokeStyle = cssColor("--good");
          ctx.lineWidth = 2;
          ctx.beginPath();
          ctx.arc(xOf(match.height), yOf(match.required_bytes), 7, 0, 2 * Math.PI);
          ctx.stroke();
        }
      }
      this.canvas.setAttribute("aria-label", "arena against input size");
    }
  }

  function inputPanel() {
    const report = DATA.reports[state.r];
    if (!report.input_sizes.length) return null;
    const best = report.max_input_shape;
    const section = panel("Arena by input size", best ? "largest that fits: " + report.max_input_name + "=" + best.join("x") : "no size fits");
    section.root.id = "input-sizes";
    const box = el("div", { class: "chart", id: "input-chart" });
    section.body.append(box);
    const chart = new InputChart(box, report);
    views.push(chart);
    return section.root;
  }

  function tensorFilterRows(A) {
    const text = state.filter.toLowerCase();
    let scope = null;
    if (state.scope === "peak" && A.peakRow >= 0) scope = new Set(liveAt(A, A.S.step[A.peakRow]));
    if (state.scope === "step" && state.step !== null) scope = new Set(liveAt(A, state.step));
    const rows = [];
    for (let i = 0; i < A.n; i++) {
      if (scope && !scope.has(i)) continue;
      if (text) {
        const haystack = (A.B.name[i] + " " + A.B.dtype[i] + " " + shapeText(A, i) + " " +
          stepLabel(A, A.B.producer[i])).toLowerCase();
        if (!haystack.includes(text)) continue;
      }
      rows.push(i);
    }
    return rows;
  }

  function tensorColumns() {
    const B = () => current().B;
    const number = (value) => value.toLocaleString("en-US");
    const nameCell = (i) => {
      const swatch = el("span", { class: "swatch" });
      swatch.style.background = PALETTE[i % PALETTE.length];
      return el("span", { title: B().name[i] }, [swatch, B().name[i]]);
    };
    return [
      { key: "id", label: "id", width: "44px", num: true, value: (i) => B().id[i] },
      { key: "name", label: "name", width: "minmax(160px, 3fr)", value: (i) => B().name[i], render: nameCell },
      { key: "shape", label: "shape", width: "minmax(70px, 1fr)", value: (i) => shapeText(current(), i),
        sort: (i) => B().nbytes[i] },
      { key: "dtype", label: "dtype", width: "64px", value: (i) => B().dtype[i] },
      { key: "size", label: "bytes", width: "84px", num: true, value: (i) => B().size[i],
        render: (i) => number(B().size[i]) },
      { key: "first", label: "steps", width: "72px", num: true, value: (i) => B().first[i],
        render: (i) => B().first[i] + "\u2013" + B().last[i] },
      { key: "offset", label: "offset", width: "84px", num: true, value: (i) => plan(current()).offsets[i],
        render: (i) => number(plan(current()).offsets[i]) },
      { key: "producer", label: "written by", width: "minmax(90px, 1.3fr)",
        value: (i) => stepLabel(current(), B().producer[i]),
        sort: (i) => (B().producer[i] === null ? -1 : B().producer[i]) },
    ];
  }

  function buildTensorTable(tablePanel) {
    const search = el("input", { type: "search", id: "tensor-filter", placeholder: "filter by name, op, dtype, shape  ( / )" });
    const scope = el("select", { id: "tensor-scope" }, [
      el("option", { value: "all", text: "all buffers" }),
      el("option", { value: "peak", text: "live at the peak" }),
      el("option", { value: "step", text: "live at the selected step" }),
    ]);
    const count = el("span", { class: "count" });
    tablePanel.body.append(el("div", { class: "table-tools" }, [search, scope, count]));
    let lastKey = "";
    tensorTable = new VirtualTable(tablePanel.body, {
      height: 312,
      sortKey: "size",
      sortDir: -1,
      rows: () => tensorFilterRows(current()),
      click: (i) => selectTensor(i, "toggle"),
      hover: (i) => update({ hover: i }),
      mark: (i) => {
        if (i === state.selected) return "selected";
        const related = relatedSet(current());
        return related && related.has(i) ? "related" : "";
      },
      columns: tensorColumns(),
    });
    search.addEventListener("input", () => update({ filter: search.value }));
    scope.addEventListener("change", () => update({ scope: scope.value }));
    views.push({ update: () => {
      const key = [state.r, state.a, state.p, state.filter, state.scope, state.scope === "step" ? state.step : ""].join("|");
      if (key !== lastKey) { lastKey = key; tensorTable.refresh(); } else tensorTable.paint();
      count.textContent = tensorTable.rows.length + " of " + current().n;
    } });
  }

  function selectStep(step) {
    const A = current();
    if (step === null || !A.stepRow.has(step)) return;
    update({ step: state.step === step ? null : step });
    if (opTable) opTable.scrollToIndex(A.stepRow.get(step));
  }

  function buildOpTable(ops) {
    let lastKey = "";
    opTable = new VirtualTable(ops.body, {
      height: 264,
      sortKey: "step",
      sortDir: 1,
      rows: () => Array.from({ length: current().S.step.length }, (_, row) => row),
      click: (row) => selectStep(current().S.step[row]),
      mark: (row) => {
        const A = current();
        const step = A.S.step[row];
        if (step === state.step) return "selected";
        if (state.selected >= 0 && (A.B.producer[state.selected] === step || A.B.consumers[state.selected].includes(step))) return "related";
        return "";
      },
      columns: [
        { key: "step", label: "step", width: "40px", num: true, value: (row) => current().S.step[row] },
        { key: "opcode", label: "operator", width: "minmax(80px, 1fr)", value: (row) => current().S.opcode[row],
          render: (row) => { const A = current(); return A.S.operator[row] === null ? A.S.opcode[row] : A.S.operator[row] + " " + A.S.opcode[row]; } },
        { key: "live", label: "live", width: "110px", num: true, value: (row) => current().S.live_bytes[row],
          render: (row) => {
            const A = current();
            const peak = A.peakRow >= 0 ? A.S.live_bytes[A.peakRow] : 1;
            const bar = el("span", { class: "bar" });
            bar.style.width = Math.round(36 * A.S.live_bytes[row] / Math.max(peak, 1)) + "px";
            return el("span", null, [bar, " " + formatBytes(A.S.live_bytes[row])]);
          } },
      ],
    });
    views.push({ update: () => {
      const key = state.r + "|" + state.a;
      if (key !== lastKey) { lastKey = key; opTable.refresh(); } else opTable.paint();
    } });
  }

  // A tensor's short name as a button that selects it.
  function tensorLink(A, j, limit) {
    return el("button", { class: "link", text: shortLabel(A.B.name[j], limit), title: A.B.name[j],
      onclick: () => selectTensor(j) });
  }

  function renderDetails(body) {
    const A = current();
    const i = state.selected;
    body.replaceChildren();
    if (i >= 0) {
      body.append(el("div", { class: "name", id: "details-name", text: A.B.name[i] }));
      const list = el("dl");
      for (const [key, value] of tensorRows(A, i, state.p)) list.append(el("dt", { text: key }), el("dd", { text: value }));
      const offsets = el("ul");
      A.arena.plans.forEach((view) => offsets.append(el("li", { text: view.planner + ": " + view.offsets[i].toLocaleString("en-US") })));
      list.append(el("dt", { text: "offset by planner" }), el("dd", null, [offsets]));
      body.append(list);
      return;
    }
    if (state.step !== null && A.stepRow.has(state.step)) {
      const row = A.stepRow.get(state.step);
      body.append(el("div", { class: "name", text: "step " + state.step + ": " + stepLabel(A, state.step) }));
      const list = el("dl");
      const live = formatBytes(A.S.live_bytes[row]) + " in " + liveAt(A, state.step).length + " buffers";
      list.append(el("dt", { text: "live" }), el("dd", { text: live }));
      for (const [label, items] of [["reads", A.S.reads[row]], ["writes", A.S.writes[row]]]) {
        const ul = el("ul");
        for (const j of items) ul.append(el("li", null, [tensorLink(A, j, 48), " " + formatBytes(A.B.size[j])]));
        list.append(el("dt", { text: label }), el("dd", null, [items.length ? ul : "-"]));
      }
      body.append(list);
      return;
    }
    body.append(el("p", { class: "empty",
      text: "Hover any rectangle, bar or row for details; click to select it in every view. Esc clears." }));
    if (A.peakRow >= 0) {
      const step = A.S.step[A.peakRow];
      const ul = el("ul");
      for (const j of liveAt(A, step).slice(0, 8)) {
        const share = percent(A.B.size[j], A.S.live_bytes[A.peakRow]);
        ul.append(el("li", null, [tensorLink(A, j, 44), " " + formatBytes(A.B.size[j]) + " (" + share + ")"]));
      }
      body.append(el("dl", null, [el("dt", { text: "live at the peak" }), el("dd", null, [ul])]));
    }
  }

  function renderPlans(body) {
    const A = current();
    const table = el("table", { class: "totals" });
    table.append(el("tr", null, [el("th", { text: "planner" }), el("th", { text: "arena" }),
      el("th", { text: "over bound" }), el("th", { text: "declare", title: "the number to declare with this plan" })]));
    A.arena.plans.forEach((view, p) => {
      const name = el("button", { class: "link", text: view.planner + (view.is_runtime ? " \u2605" : ""), onclick: () => update({ p }) });
      table.append(el("tr", null, [el("td", null, [name]), el("td", { text: formatBytes(view.arena_size) }),
        el("td", { text: percent(view.arena_size - lowerBoundFor(A, view), lowerBoundFor(A, view)) +
          (view.proven_optimal ? " \u2713" : "") }),
        el("td", { text: formatBytes(requiredWith(A, view)) })]));
    });
    const after = A.report.runtime === "tflm" ?
      " Any other plan applies after `arenalens optimize " + A.report.model_argument + " -o optimized.tflite --planner NAME`." : "";
    body.replaceChildren(table, el("p", { class: "count",
      text: "\u2605 the runtime's own planner: what the device does." + after +
        " \u2713 optimal (proven, or at the lower bound)." }));
  }

  // ------------------------------------------------------------------------------------------
  // Compare mode: two (model, planner) views side by side

  function viewOptions(select, chosen) {
    DATA.reports.forEach((report, r) => {
      report.arenas[0].plans.forEach((view, p) => {
        select.append(el("option", { value: r + ":" + p, text: report.model + " \u00b7 " + view.planner + " (" + formatBytes(view.arena_size) + ")" }));
      });
    });
    select.value = chosen[0] + ":" + chosen[1];
  }

  function buildCompare(app) {
    const bar = el("div", { class: "toolbar" });
    const tabs = el("div", { class: "tabs" });
    for (const [mode, text] of [["report", "Report"], ["compare", "Compare"]]) {
      tabs.append(el("button", { text, "aria-pressed": String(state.mode === mode), id: "mode-" + mode, onclick: () => { state.mode = mode; rebuild(); } }));
    }
    const leftSelect = el("select", { id: "compare-left" });
    const rightSelect = el("select", { id: "compare-right" });
    viewOptions(leftSelect, state.left);
    viewOptions(rightSelect, state.right);
    const pick = (select, side) => select.addEventListener("change", () => {
      state[side] = select.value.split(":").map(Number);
      state.compareKey = null;
      rebuild();
    });
    pick(leftSelect, "left");
    pick(rightSelect, "right");
    bar.append(tabs, el("label", null, ["left", leftSelect]), el("label", null, ["right", rightSelect]), budgetInput());
    app.append(bar);

    const L = arenaOf(state.left[0], 0);
    const R = arenaOf(state.right[0], 0);
    const lp = state.left[1];
    const rp = state.right[1];
    const totalsPanel = panel("Where the bytes went", "left \u2192 right");
    const top = el("div", { class: "compare-top" });
    app.append(top);
    top.append(totalsPanel.root);
    const peakOf = (A) => (A.peakRow >= 0 ? A.S.live_bytes[A.peakRow] : 0);
    const rows = [
      ["arena", plan(L, lp).arena_size, plan(R, rp).arena_size],
      ["lower bound", L.arena.lower_bound, R.arena.lower_bound],
      ["without reuse", L.arena.no_reuse_bytes, R.arena.no_reuse_bytes],
      ["peak live", peakOf(L), peakOf(R)],
      ["required", plan(L, lp).arena_size + otherBytes(L), plan(R, rp).arena_size + otherBytes(R)],
      ["buffers", L.n, R.n],
      ["steps", L.S.step.length, R.S.step.length],
    ];
    const table = el("table", { class: "totals", id: "compare-totals" });
    table.append(el("tr", null, [el("th", { text: "" }), el("th", { text: "left" }), el("th", { text: "right" }), el("th", { text: "change" })]));
    for (const [label, a, b] of rows) {
      const count = label === "buffers" || label === "steps";
      const delta = b - a;
      table.append(el("tr", null, [el("td", { text: label }), el("td", { text: count ? String(a) : formatBytes(a) }),
        el("td", { text: count ? String(b) : formatBytes(b) }),
        el("td", { class: delta > 0 ? "plus" : delta < 0 ? "minus" : "", text: count ? (delta > 0 ? "+" : "") + delta : signedBytes(delta) })]));
    }
    totalsPanel.body.append(table, el("p", { class: "count", text: explainDiff(L, lp, R, rp) }));

    const maps = el("div", { class: "compare-maps" });
    app.append(maps);
    // One byte scale and one step axis for both maps, so sizes and positions compare by eye.
    const maxBytes = Math.max(mapMaximum(L, [lp]), mapMaximum(R, [rp]));
    const sharedRange = [Math.min(L.lowStep, R.lowStep), Math.max(L.highStep, R.highStep)];
    for (const [A, p, side] of [[L, lp, "left"], [R, rp, "right"]]) {
      const mapPanel = panel(side + ": " + A.report.model + " \u00b7 " + plan(A, p).planner, formatBytes(plan(A, p).arena_size));
      maps.append(mapPanel.root);
      const box = el("div", { class: "chart", id: "compare-map-" + side });
      mapPanel.body.append(box);
      const chart = new MemoryMap(box, 320, () => ({
        A, p, range: sharedRange, maxBytes,
        highlight: (i) => (state.compareKey === null ? "" : A.keys[i] === state.compareKey ? "selected" : "dim"),
      }), {
        hover: () => {},
        click: (i) => {
          state.compareKey = i >= 0 && A.keys[i] !== state.compareKey ? A.keys[i] : null;
          update({});
          changes.scrollToIndex(keys.indexOf(state.compareKey));
        },
      });
      views.push(chart);
    }

    const livePanel = panel("Live bytes per step", "left and right on one scale");
    top.append(livePanel.root);
    const liveBox = el("div", { class: "chart", id: "compare-live" });
    livePanel.body.append(liveBox, el("div", { class: "legend" }, [
      legendSeries(PALETTE[0], "left: " + L.report.model + " \u00b7 " + plan(L, lp).planner),
      legendSeries(PALETTE[1], "right: " + R.report.model + " \u00b7 " + plan(R, rp).planner, true)]));
    views.push(new LiveChart(liveBox, 220, () => ({
      series: [{ A: L, p: lp, color: PALETTE[0], label: "left" }, { A: R, p: rp, color: PALETTE[1], label: "right", dash: [6, 3] }],
      range: sharedRange,
      maxBytes: Math.max(peakOf(L), peakOf(R), 1) * 1.08,
      selected: null,
    }), {}));

    const changePanel = panel("Tensors, largest change first", "matched by name");
    app.append(changePanel.root);
    const keys = [];
    const seen = new Set();
    for (const key of L.keys) { keys.push(key); seen.add(key); }
    for (const key of R.keys) if (!seen.has(key)) keys.push(key);
    const side = (A, p, key, what) => {
      const i = A.keyIndex.get(key);
      if (i === undefined) return null;
      if (what === "bytes") return A.B.size[i];
      if (what === "offset") return plan(A, p).offsets[i];
      if (what === "first") return A.B.first[i];
      return A.B.first[i] + "\u2013" + A.B.last[i];
    };
    const change = (k) => (side(R, rp, keys[k], "bytes") || 0) - (side(L, lp, keys[k], "bytes") || 0);
    const moved = (k) => {
      const a = side(L, lp, keys[k], "offset");
      const b = side(R, rp, keys[k], "offset");
      return a === null || b === null ? 0 : b - a;
    };
    // "left bytes" / "right bytes" style column pairs; a tensor missing on a side shows "-".
    const sideColumns = (what, label, width, format, sortBy) => [[L, lp, "left"], [R, rp, "right"]].map(
      ([A, p, name]) => ({
        key: name + what, label: name + " " + label, width, num: true,
        value: (k) => { const value = side(A, p, keys[k], sortBy || what); return value === null ? -1 : value; },
        render: (k) => { const value = side(A, p, keys[k], what); return value === null ? "-" : format(value); },
      }));
    const changes = new VirtualTable(changePanel.body, {
      height: 300,
      sortKey: "change",
      sortDir: -1,
      rows: () => keys.map((_, k) => k),
      click: (k) => { state.compareKey = state.compareKey === keys[k] ? null : keys[k]; update({}); },
      mark: (k) => (keys[k] === state.compareKey ? "selected" : ""),
      columns: [
        { key: "name", label: "name", width: "minmax(160px, 3fr)", value: (k) => keys[k] },
        ...sideColumns("bytes", "bytes", "90px", (value) => formatBytes(value)),
        { key: "change", label: "change", width: "90px", num: true, value: (k) => Math.abs(change(k)),
          // Largest byte change first; among equal ones, the tensor that moved farthest.
          compare: (x, y) => Math.abs(change(x)) - Math.abs(change(y)) || Math.abs(moved(x)) - Math.abs(moved(y)),
          render: (k) => {
            const delta = change(k);
            return el("span", { class: delta > 0 ? "plus" : delta < 0 ? "minus" : "", text: signedBytes(delta) });
          } },
        ...sideColumns("offset", "offset", "90px", (value) => value.toLocaleString("en-US")),
        ...sideColumns("steps", "steps", "76px", (value) => value, "first"),
      ],
    });
    changes.refresh();
    views.push({ update: () => changes.paint() });
  }

  function legendSeries(color, text, dashed) {
    const swatch = el("span", { class: "key" + (dashed ? " dashed" : "") });
    swatch.style.borderTopColor = color;
    return el("span", null, [swatch, text]);
  }

  function explainDiff(L, lp, R, rp) {
    const arenaDelta = plan(R, rp).arena_size - plan(L, lp).arena_size;
    const boundDelta = R.arena.lower_bound - L.arena.lower_bound;
    const layoutDelta = arenaDelta - boundDelta;
    if (arenaDelta === 0) return "Both views need the same arena.";
    const amount = (delta) => (delta === 0 ? "0 B" : signedBytes(delta));
    return "The arena changes by " + amount(arenaDelta) + ": " + amount(boundDelta) +
      " from what is live at the busiest step (the lower bound), " + amount(layoutDelta) +
      " from how the planner packs it (fragmentation).";
  }

  // ------------------------------------------------------------------------------------------
  // Page

  function rebuild() {
    views.length = 0;
    mapView = lifetimeView = tensorTable = opTable = null;
    hideTooltip();
    const app = document.getElementById("app");
    app.replaceChildren();
    if (state.mode === "compare") buildCompare(app);
    else buildReport(app);
    const tool = DATA.tool ? DATA.tool + " \u00b7 " : "";
    app.append(el("footer", { text: tool + "report schema " + DATA.schema_version + " \u00b7 self-contained page: no network requests." }));
    // First render now, not on the next frame: the cards' text sets their height, so waiting
    // would show empty cards and then move every chart below them.
    for (const view of views) view.update();
  }

  // Test and scripting hooks: read-only views of the state, and geometry for pointer tests.
  window.arenalens = {
    state: () => JSON.parse(JSON.stringify(state)),
    find: (name) => current().B.name.indexOf(name),
    rectCenter: (i) => (mapView ? mapView.center(i) : null),
    select: (i) => selectTensor(i),
    // Redraws every view now; returns the milliseconds it took (benchmarks/bench_report.py).
    redraw: () => {
      const started = performance.now();
      for (const view of views) view.update();
      return performance.now() - started;
    },
  };

  // Keys, registered once (the page is rebuilt on every mode or model switch):
  // "/" focuses the tensor filter, Escape clears the selection.
  document.addEventListener("keydown", (event) => {
    const search = document.getElementById("tensor-filter");
    if (event.key === "/" && search && document.activeElement !== search) {
      event.preventDefault();
      search.focus();
    }
    if (event.key === "Escape") update({ selected: -1, step: null, compareKey: null });
  });

  rebuild();
})();
