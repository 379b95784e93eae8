/*
 * colors.js -- the job graph's vertex colouring and backpressure levels.
 *
 * A vertex is coloured from the maximum over its subtasks of
 * busyTimeMsPerSecond and backPressuredTimeMsPerSecond (each 0..1000), the
 * way Flink's dashboard does it: start at idle blue #5db1ff, blend toward busy
 * red #ee6464 by busy/1000, then blend that toward #888888 by
 * backpressured/1000. Each blend is linear per RGB channel and rounds the
 * channel to an integer. The border follows the same law from #1890ff toward
 * #ee2222 and then #000000, so a backpressured vertex gets a dark outline.
 * A red vertex downstream of dark ones is the bottleneck.
 *
 * The backpressure level follows Flink's thresholds on the ratio
 * backpressured/1000: ok <= 0.10 < low <= 0.50 < high.
 */

export const COLOR_IDLE = '#5db1ff';
export const COLOR_BUSY = '#ee6464';
export const COLOR_BACKPRESSURED = '#888888';
export const BORDER_IDLE = '#1890ff';
export const BORDER_BUSY = '#ee2222';
export const BORDER_BACKPRESSURED = '#000000';

function toRgb(hex) {
  const v = parseInt(hex.slice(1), 16);
  return [(v >> 16) & 255, (v >> 8) & 255, v & 255];
}

function toHex(rgb) {
  return '#' + rgb.map((c) => c.toString(16).padStart(2, '0')).join('');
}

/* Blends colour `from` toward `to` by p in [0,1]; "#rrggbb" in and out. */
export function blend(from, to, p) {
  const f = toRgb(from);
  const t = toRgb(to);
  const q = Math.min(1, Math.max(0, p));
  return toHex(f.map((c, i) => Math.round((t[i] - c) * q + c)));
}

/* Clamps a ms-per-second metric to an integer in 0..1000 (null -> 0). */
export function perMille(v) {
  const n = typeof v === 'number' ? v : Number(v);
  if (!Number.isFinite(n)) return 0;
  return Math.min(1000, Math.max(0, Math.round(n)));
}

/* Fill colour for busy and backpressured ms-per-second (0..1000). */
export function vertexFill(busy, backpressured) {
  let c = COLOR_IDLE;
  if (busy > 0) c = blend(c, COLOR_BUSY, busy / 1000);
  if (backpressured > 0) c = blend(c, COLOR_BACKPRESSURED, backpressured / 1000);
  return c;
}

/* Border colour, same law as the fill. */
export function vertexBorder(busy, backpressured) {
  let c = BORDER_IDLE;
  if (busy > 0) c = blend(c, BORDER_BUSY, busy / 1000);
  if (backpressured > 0) c = blend(c, BORDER_BACKPRESSURED, backpressured / 1000);
  return c;
}

/* "ok" | "low" | "high" from backpressured ms-per-second. */
export function bpLevel(backpressured) {
  const r = backpressured / 1000;
  if (r <= 0.1) return 'ok';
  if (r <= 0.5) return 'low';
  return 'high';
}

/* Accepts a level string from the server if it is one we know. */
export function normLevel(level) {
  const l = String(level || '').toLowerCase();
  return l === 'ok' || l === 'low' || l === 'high' ? l : null;
}
