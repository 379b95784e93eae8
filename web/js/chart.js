/*
 * chart.js -- tiny SVG charts: bars for checkpoint history, a line for a
 * metric's recent values.
 *
 * Bar chart: one bar per point, oldest on the left, scaled to the largest
 * value; the axis shows that maximum and zero through the caller's
 * formatter. Failed checkpoints are drawn as short red ticks so they stay
 * visible. Line chart: the values read so far (the caller keeps a bounded
 * window), oldest on the left, scaled between zero and the largest. Each
 * chart is rebuilt in one synchronous step on each update, which does not
 * flicker.
 */

import { s, setAttr } from './dom.js';

export function barChart(title, format, props) {
  const W = 360;
  const H = 120;
  const L = 58; /* left margin for the axis labels */
  const B = 18; /* bottom margin for the ids */
  const svg = s('svg', Object.assign({ class: 'bar-chart', viewBox: `0 0 ${W} ${H}`, width: W, height: H,
    role: 'img', 'aria-label': title }, props || {}));
  return {
    el: svg,
    /* points: [{id, value, failed}] oldest first */
    update(points) {
      const max = Math.max(0, ...points.map((p) => (Number.isFinite(p.value) ? p.value : 0)));
      svg.replaceChildren();
      svg.append(s('text', { class: 'chart-title', x: L, y: 11 }, title));
      svg.append(s('line', { class: 'axis', x1: L, x2: W - 4, y1: H - B, y2: H - B }));
      svg.append(s('text', { class: 'axis-label', x: L - 6, y: 24, 'text-anchor': 'end' }, max > 0 ? format(max) : ''));
      svg.append(s('text', { class: 'axis-label', x: L - 6, y: H - B, 'text-anchor': 'end' }, '0'));
      svg.append(s('line', { class: 'grid-line', x1: L, x2: W - 4, y1: 20, y2: 20 }));
      const n = points.length;
      setAttr(svg, 'data-points', n);
      if (n === 0) {
        svg.append(s('text', { class: 'axis-label', x: (L + W) / 2, y: H / 2, 'text-anchor': 'middle' }, 'no checkpoints yet'));
        return;
      }
      const slot = (W - 4 - L) / n;
      const bw = Math.max(2, Math.min(28, slot * 0.7));
      const plotH = H - B - 20;
      points.forEach((p, i) => {
        const x = L + i * slot + (slot - bw) / 2;
        const v = Number.isFinite(p.value) ? p.value : 0;
        const bh = p.failed ? 3 : max > 0 ? Math.max(1, (v / max) * plotH) : 1;
        const bar = s('rect', { class: p.failed ? 'cp-bar failed' : 'cp-bar', x, y: H - B - bh, width: bw, height: bh,
          'data-checkpoint-id': p.id },
        s('title', null, `#${p.id}: ${p.failed ? 'failed' : format(v)}`));
        svg.append(bar);
        if (n <= 16 || i % Math.ceil(n / 16) === 0) {
          svg.append(s('text', { class: 'axis-label', x: x + bw / 2, y: H - 5, 'text-anchor': 'middle' }, String(p.id)));
        }
      });
    },
  };
}

/* A metric's recent values as a line: update(values) with numbers (null for
 * a reading that had none), oldest first. */
export function lineChart(title, format, props) {
  const W = 360;
  const H = 110;
  const L = 58;
  const T = 18;
  const B = 8;
  const svg = s('svg', Object.assign({ class: 'line-chart', viewBox: `0 0 ${W} ${H}`, width: W, height: H,
    role: 'img', 'aria-label': title }, props || {}));
  return {
    el: svg,
    update(values) {
      const pts = values.filter((v) => Number.isFinite(v));
      const max = Math.max(0, ...pts);
      svg.replaceChildren();
      setAttr(svg, 'data-points', pts.length);
      svg.append(s('text', { class: 'chart-title', x: L, y: 11 }, title));
      svg.append(s('line', { class: 'axis', x1: L, x2: W - 4, y1: H - B, y2: H - B }));
      svg.append(s('line', { class: 'grid-line', x1: L, x2: W - 4, y1: T, y2: T }));
      svg.append(s('text', { class: 'axis-label', x: L - 6, y: T + 4, 'text-anchor': 'end' }, max > 0 ? format(max) : ''));
      svg.append(s('text', { class: 'axis-label', x: L - 6, y: H - B, 'text-anchor': 'end' }, '0'));
      if (values.length === 0) return;
      const step = values.length > 1 ? (W - 4 - L) / (values.length - 1) : 0;
      const y = (v) => H - B - (max > 0 ? (v / max) * (H - B - T) : 0);
      let d = '';
      values.forEach((v, i) => {
        if (!Number.isFinite(v)) return;
        d += `${d ? 'L' : 'M'}${(L + i * step).toFixed(1)},${y(v).toFixed(1)}`;
      });
      if (d) svg.append(s('path', { class: 'metric-line', d }));
      const last = values[values.length - 1];
      if (Number.isFinite(last)) {
        svg.append(s('circle', { class: 'metric-dot', cx: L + (values.length - 1) * step, cy: y(last), r: 2.5 }));
      }
    },
  };
}
