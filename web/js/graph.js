/*
 * graph.js -- the job's dataflow graph as SVG, laid out left to right.
 *
 * Layout: every plan node gets a layer equal to the longest path from a
 * source (a node with no known inputs), computed in topological order (Kahn);
 * nodes caught in a cycle, which a valid plan never has, go to one extra
 * layer instead of looping. Inside a layer nodes are ordered by the average
 * height of their inputs (one barycentre pass, enough for pipelines) and
 * stacked; each column is then centred. Edges are cubic curves from the
 * right side of the producer to the left side of the consumer, spread when a
 * node has several, ending in an arrowhead and labelled with ship_strategy.
 *
 * A node's box shows the vertex name (chained operators, joined by " -> " in
 * the name, as stacked lines), a backpressure badge, and five metric lines.
 * The layout is built once per plan shape; refreshes only patch fills, texts
 * and data attributes (data-busy, data-backpressured, data-bp-level,
 * data-fill, data-watermark, data-late-dropped) on the existing <g> elements.
 */

import { s, setText, setAttr } from './dom.js';
import { clip } from './format.js';

const NODE_W = 232;
const COL_GAP = 92;
const ROW_GAP = 34;
const PAD = 20;
const NAME_LINE_H = 16;
const METRIC_LINE_H = 15;
const METRIC_FIELDS = ['status', 'in', 'out', 'watermark', 'load'];
const NAME_CHARS = 30; /* estimate of characters per name line when text cannot be measured */

/*
 * Puts text into an SVG text element, shortened with an ellipsis until it
 * fits maxWidth. Measures with getComputedTextLength when the element is
 * rendered; otherwise falls back to a character estimate.
 */
function fitText(el, text, maxWidth, fallbackChars) {
  el.textContent = text;
  let width = 0;
  try {
    width = el.getComputedTextLength();
  } catch (e) {
    width = 0;
  }
  if (width === 0) {
    el.textContent = clip(text, fallbackChars);
    return false;
  }
  if (width <= maxWidth) return true;
  let lo = 1;
  let hi = text.length - 1;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    el.textContent = text.slice(0, mid) + '\u2026';
    if (el.getComputedTextLength() <= maxWidth) lo = mid;
    else hi = mid - 1;
  }
  el.textContent = text.slice(0, lo) + '\u2026';
  return true;
}

/* Splits a vertex name into chained-operator lines. */
export function nameLines(name) {
  const parts = String(name || '').split(' -> ').map((p) => p.trim()).filter((p) => p !== '');
  return parts.length ? parts : [String(name || '?')];
}

/*
 * Computes positions. nodes: [{id, inputs:[{id, ship_strategy}], lines:[..]}].
 * Returns {pos: Map(id -> {x, y, w, h, layer}), edges: [{from, to, ship, inIdx, inCount,
 * outIdx, outCount}], width, height}.
 */
export function layoutGraph(nodes) {
  const byId = new Map(nodes.map((n) => [n.id, n]));
  const inputsOf = new Map();
  const outputsOf = new Map(nodes.map((n) => [n.id, []]));
  for (const n of nodes) {
    const ins = (n.inputs || []).filter((i) => byId.has(i.id) && i.id !== n.id);
    inputsOf.set(n.id, ins);
    for (const i of ins) outputsOf.get(i.id).push(n.id);
  }
  /* longest path from sources, Kahn's order */
  const indeg = new Map(nodes.map((n) => [n.id, inputsOf.get(n.id).length]));
  const layer = new Map();
  const queue = nodes.filter((n) => indeg.get(n.id) === 0).map((n) => n.id);
  for (const id of queue) layer.set(id, 0);
  for (let qi = 0; qi < queue.length; qi++) {
    const id = queue[qi];
    for (const out of outputsOf.get(id)) {
      layer.set(out, Math.max(layer.get(out) || 0, layer.get(id) + 1));
      indeg.set(out, indeg.get(out) - 1);
      if (indeg.get(out) === 0) queue.push(out);
    }
  }
  let maxLayer = 0;
  for (const v of layer.values()) maxLayer = Math.max(maxLayer, v);
  const cyclic = nodes.filter((n) => indeg.get(n.id) > 0);
  for (const n of cyclic) layer.set(n.id, maxLayer + 1);
  if (cyclic.length) maxLayer++;

  const heightOf = (n) => 12 + n.lines.length * NAME_LINE_H + 10 + METRIC_FIELDS.length * METRIC_LINE_H + 8;
  const columns = [];
  for (let l = 0; l <= maxLayer; l++) columns.push([]);
  for (const n of nodes) columns[layer.get(n.id)].push(n);

  const pos = new Map();
  const colHeights = [];
  columns.forEach((col, l) => {
    if (l > 0) {
      const centre = (n) => {
        const ys = inputsOf.get(n.id).map((i) => pos.get(i.id)).filter(Boolean).map((p) => p.y + p.h / 2);
        return ys.length ? ys.reduce((a, b) => a + b, 0) / ys.length : 0;
      };
      const keyed = col.map((n, idx) => ({ n, idx, c: centre(n) }));
      keyed.sort((a, b) => a.c - b.c || a.idx - b.idx);
      col.splice(0, col.length, ...keyed.map((k) => k.n));
    }
    let y = 0;
    for (const n of col) {
      const hgt = heightOf(n);
      pos.set(n.id, { x: PAD + l * (NODE_W + COL_GAP), y, w: NODE_W, h: hgt, layer: l });
      y += hgt + ROW_GAP;
    }
    colHeights.push(Math.max(0, y - ROW_GAP));
  });
  const tallest = Math.max(0, ...colHeights);
  columns.forEach((col, l) => {
    const shift = PAD + 14 + (tallest - colHeights[l]) / 2;
    for (const n of col) pos.get(n.id).y += shift;
  });

  const edges = [];
  for (const n of nodes) {
    const ins = inputsOf.get(n.id);
    ins.forEach((i, inIdx) => {
      edges.push({ from: i.id, to: n.id, ship: i.ship_strategy || '', inIdx, inCount: ins.length });
    });
  }
  const outCounters = new Map();
  for (const e of edges) {
    const outs = edges.filter((x) => x.from === e.from);
    outs.sort((a, b) => pos.get(a.to).y - pos.get(b.to).y);
    e.outCount = outs.length;
    if (!outCounters.has(e.from)) outCounters.set(e.from, outs);
    e.outIdx = outCounters.get(e.from).indexOf(e);
  }
  const width = PAD * 2 + (maxLayer + 1) * NODE_W + maxLayer * COL_GAP;
  const height = tallest + PAD * 2 + 14;
  return { pos, edges, width, height };
}

/* The point of a cubic Bezier (monotone in x) whose x is closest to x. */
function pointAtX(p0, p1, p2, p3, x) {
  const at = (t) => {
    const u = 1 - t;
    return [0, 1].map((k) => u * u * u * p0[k] + 3 * u * u * t * p1[k] + 3 * u * t * t * p2[k] + t * t * t * p3[k]);
  };
  let lo = 0;
  let hi = 1;
  for (let i = 0; i < 30; i++) {
    const mid = (lo + hi) / 2;
    if (at(mid)[0] < x) lo = mid;
    else hi = mid;
  }
  return at((lo + hi) / 2);
}

/*
 * The graph widget. onSelect(vertexId) is called when a node is clicked or
 * activated with Enter. setPlan(nodes) (re)builds when the shape changed;
 * update(id, view) patches one node; select(id) marks the chosen one.
 */
export class JobGraph {
  constructor(onSelect) {
    this.onSelect = onSelect;
    this.signature = '';
    this.nodes = new Map(); /* id -> {g, rect, badge, badgeText, fields} */
    this.selected = null;
    this.svg = s('svg', { class: 'job-graph', id: 'job-graph', role: 'img', 'aria-label': 'Job dataflow graph' });
  }

  setPlan(nodes) {
    const sig = JSON.stringify(nodes.map((n) => [n.id, n.lines, (n.inputs || []).map((i) => [i.id, i.ship_strategy])]));
    if (sig === this.signature) return false;
    this.signature = sig;
    this.build(nodes);
    return true;
  }

  build(nodes) {
    const svg = this.svg;
    svg.replaceChildren();
    this.nodes.clear();
    const { pos, edges, width, height } = layoutGraph(nodes);
    this.natural = { width, height };
    setAttr(svg, 'viewBox', `0 0 ${width} ${height}`);
    this.fitToContainer();
    svg.append(s('defs', null,
      s('marker', { id: 'sl-arrow', viewBox: '0 0 10 10', refX: '9', refY: '5', markerWidth: '9', markerHeight: '9',
        markerUnits: 'userSpaceOnUse', orient: 'auto' },
      s('path', { d: 'M0,0 L10,5 L0,10 z', class: 'arrow-head' }))));

    const edgeLayer = s('g', { class: 'edges' });
    const labelLayer = s('g', { class: 'edge-labels' });
    for (const e of edges) {
      const a = pos.get(e.from);
      const b = pos.get(e.to);
      const x1 = a.x + a.w;
      const y1 = a.y + (a.h * (e.outIdx + 1)) / (e.outCount + 1);
      const x2 = b.x - 1;
      const y2 = b.y + (b.h * (e.inIdx + 1)) / (e.inCount + 1);
      const dx = Math.max(40, (x2 - x1) / 2);
      const d = `M${x1},${y1} C${x1 + dx},${y1} ${x2 - dx},${y2} ${x2},${y2}`;
      edgeLayer.append(s('path', { class: 'edge', d, 'marker-end': 'url(#sl-arrow)',
        'data-from': e.from, 'data-to': e.to, 'data-ship-strategy': e.ship }));
      if (e.ship) {
        const label = String(e.ship);
        const lw = label.length * 6.6 + 12;
        /* the label sits in the gap just before the consumer, so an edge that
         * skips layers does not hide it behind an intermediate node */
        const [mx, my] = pointAtX([x1, y1], [x1 + dx, y1], [x2 - dx, y2], [x2, y2], Math.max((x1 + x2) / 2, x2 - COL_GAP / 2));
        labelLayer.append(s('g', { class: 'edge-label', 'data-from': e.from, 'data-to': e.to },
          s('rect', { x: mx - lw / 2, y: my - 9, width: lw, height: 18, rx: 9 }),
          s('text', { x: mx, y: my + 4, 'text-anchor': 'middle' }, label)));
      }
    }
    svg.append(edgeLayer, labelLayer);

    const nodeLayer = s('g', { class: 'vertices' });
    for (const n of nodes) {
      const p = pos.get(n.id);
      const title = s('title', null, n.lines.join('\n  -> '));
      const rect = s('rect', { class: 'vertex-box', width: p.w, height: p.h, rx: 6, ry: 6 });
      const nameText = s('text', { class: 'vertex-name', x: 10, y: 8 });
      const nameSpans = n.lines.map((line, i) => {
        const t = s('tspan', { x: 10, dy: i === 0 ? 13 : NAME_LINE_H });
        nameText.append(t);
        /* the first line leaves room for the backpressure badge */
        return { t, text: (i > 0 ? '\u21b3 ' : '') + line, max: p.w - 20 - (i === 0 ? 46 : 0), chars: NAME_CHARS - (i === 0 ? 7 : 0) };
      });
      const badgeRect = s('rect', { x: p.w - 46, y: 7, width: 38, height: 16, rx: 8 });
      const badgeText = s('text', { x: p.w - 27, y: 19, 'text-anchor': 'middle' }, '');
      const badge = s('g', { class: 'bp-badge' }, badgeRect, badgeText);
      const sepY = 12 + n.lines.length * NAME_LINE_H + 4;
      const sep = s('line', { class: 'vertex-sep', x1: 8, x2: p.w - 8, y1: sepY, y2: sepY });
      const metrics = s('text', { class: 'vertex-metrics', x: 10, y: sepY + 2 });
      const fields = {};
      METRIC_FIELDS.forEach((f) => {
        const t = s('tspan', { x: 10, dy: METRIC_LINE_H, 'data-field': f }, '');
        fields[f] = t;
        metrics.append(t);
      });
      const g = s('g', { class: 'vertex', transform: `translate(${p.x},${p.y})`, tabindex: '0',
        role: 'button', 'data-vertex-id': n.id }, title, rect, nameText, badge, sep, metrics);
      g.addEventListener('click', () => this.onSelect(n.id));
      g.addEventListener('keydown', (ev) => {
        if (ev.key === 'Enter' || ev.key === ' ') {
          ev.preventDefault();
          this.onSelect(n.id);
        }
      });
      nodeLayer.append(g);
      this.nodes.set(n.id, { g, rect, badge, badgeText, fields, nameSpans });
    }
    svg.append(nodeLayer);
    this.fitNames();
    if (this.selected) this.select(this.selected);
  }

  /* Shortens name lines to their boxes; measuring needs the SVG rendered. */
  fitNames() {
    let measured = true;
    for (const n of this.nodes.values()) {
      for (const ns of n.nameSpans) measured = fitText(ns.t, ns.text, ns.max, ns.chars) && measured;
    }
    this.fitted = measured;
  }

  /*
   * Sizes the SVG: natural size when it fits the container, shrunk to the
   * container width when that keeps at least 70 % of the natural size (text
   * stays legible), otherwise natural size with scrolling.
   */
  fitToContainer() {
    if (!this.natural) return;
    const { width, height } = this.natural;
    const avail = this.svg.parentNode ? this.svg.parentNode.clientWidth - 4 : 0;
    let w = width;
    if (avail > 0 && avail < width) w = Math.max(avail, width * 0.7);
    setAttr(this.svg, 'width', Math.round(w));
    setAttr(this.svg, 'height', Math.round((height * w) / width));
  }

  /* Re-fits the names if they were built while the graph was hidden. */
  ensureFitted() {
    if (!this.fitted && this.nodes.size) this.fitNames();
  }

  /*
   * view: {busy, backpressured, level, measured, fill, border, watermarkAttr, late,
   *        text: {status, in, out, watermark, load}}
   */
  update(id, view) {
    const n = this.nodes.get(id);
    if (!n) return;
    setAttr(n.g, 'data-busy', view.busy);
    setAttr(n.g, 'data-backpressured', view.backpressured);
    setAttr(n.g, 'data-bp-level', view.level);
    setAttr(n.g, 'data-fill', view.fill);
    setAttr(n.g, 'data-watermark', view.watermarkAttr);
    setAttr(n.g, 'data-late-dropped', view.late);
    setAttr(n.rect, 'fill', view.fill);
    setAttr(n.rect, 'stroke', view.border);
    /* without any busy/backpressure metric the badge says so instead of "OK" */
    const measured = view.measured !== false;
    setAttr(n.badge, 'class', measured ? `bp-badge bp-${view.level}` : 'bp-badge bp-none');
    setText(n.badgeText, measured ? view.level.toUpperCase() : 'N/A');
    for (const f of METRIC_FIELDS) setText(n.fields[f], view.text[f] || '');
  }

  select(id) {
    this.selected = id;
    for (const [vid, n] of this.nodes) {
      const on = vid === id;
      n.g.classList.toggle('selected', on);
      setAttr(n.g, 'aria-pressed', on ? 'true' : 'false');
    }
  }
}
