/*
 * format.js -- turns REST values into short, stable text for the dashboard.
 *
 * The REST API hands out numbers sometimes as JSON numbers and sometimes as
 * strings (metric endpoints answer "value":"123"), uses -1 for "no end time"
 * and Long.MIN_VALUE for "no watermark yet". num() normalises all of that to
 * a finite number or null, and every formatter prints a dash for null, so the
 * page never shows NaN, undefined or a 1970 date.
 */

export const DASH = '\u2014';

/* A finite number from a number or numeric string, else null. */
export function num(v) {
  if (v === null || v === undefined || v === '' || typeof v === 'boolean') return null;
  const n = typeof v === 'number' ? v : Number(v);
  return Number.isFinite(n) ? n : null;
}

const intFmt = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });
const compactFmt = new Intl.NumberFormat('en-US', { notation: 'compact', maximumFractionDigits: 1 });
const rateFmt = new Intl.NumberFormat('en-US', { maximumFractionDigits: 1 });

/* 1234567 -> "1,234,567" */
export function fmtInt(v) {
  const n = num(v);
  return n === null ? DASH : intFmt.format(n);
}

/* 1234567 -> "1.2M" */
export function fmtCompact(v) {
  const n = num(v);
  return n === null ? DASH : compactFmt.format(n);
}

/* records per second -> "1.2K/s", "3.5/s" */
export function fmtRate(v) {
  const n = num(v);
  if (n === null) return DASH;
  return (Math.abs(n) >= 1000 ? compactFmt.format(n) : rateFmt.format(n)) + '/s';
}

/* bytes -> "1.5 MiB" */
export function fmtBytes(v) {
  const n = num(v);
  if (n === null || n < 0) return DASH;
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let x = n;
  let i = 0;
  while (x >= 1024 && i < units.length - 1) {
    x /= 1024;
    i++;
  }
  return (i === 0 ? String(Math.round(x)) : x.toFixed(x >= 100 ? 0 : 1)) + ' ' + units[i];
}

/* milliseconds -> "450 ms", "12.3 s", "5m 02s", "3h 04m", "2d 5h" */
export function fmtDuration(v) {
  const n = num(v);
  if (n === null || n < 0) return DASH;
  if (n < 1000) return Math.round(n) + ' ms';
  const sec = n / 1000;
  if (sec < 60) return sec.toFixed(sec < 10 ? 2 : 1) + ' s';
  const s = Math.floor(sec) % 60;
  const m = Math.floor(sec / 60) % 60;
  const hr = Math.floor(sec / 3600) % 24;
  const d = Math.floor(sec / 86400);
  if (d > 0) return `${d}d ${hr}h`;
  if (hr > 0) return `${hr}h ${pad(m)}m`;
  return `${m}m ${pad(s)}s`;
}

function pad(n, w = 2) {
  return String(n).padStart(w, '0');
}

/* epoch ms -> "2024-05-01 12:00:03" in the browser's time zone; <=0 -> dash */
export function fmtTime(v) {
  const n = num(v);
  if (n === null || n <= 0) return DASH;
  const d = new Date(n);
  if (Number.isNaN(d.getTime())) return DASH;
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ` +
    `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}

/* epoch ms -> "12:00:03.250" (time of day with milliseconds) */
export function fmtClock(v) {
  const n = num(v);
  if (n === null) return DASH;
  const d = new Date(n);
  if (Number.isNaN(d.getTime())) return DASH;
  return `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}.${pad(d.getMilliseconds(), 3)}`;
}

/* Watermarks below this are "none yet" (Long.MIN_VALUE), above it the final
 * MAX_WATERMARK a drained or finished source emits. */
const WM_NONE = -(2 ** 53);
const WM_MAX = 2 ** 53;

/*
 * Classifies a watermark: {kind: 'idle'|'none'|'max'|'time', ms}.
 * idle wins over any value (an idle input's stale watermark is misleading).
 */
export function watermarkKind(v, idle) {
  if (idle) return { kind: 'idle', ms: null };
  const n = num(v);
  if (n === null || n <= WM_NONE) return { kind: 'none', ms: null };
  if (n >= WM_MAX) return { kind: 'max', ms: null };
  return { kind: 'time', ms: n };
}

/* Watermark text: "idle", "none", "end (MAX)" or "12:00:03.250". */
export function fmtWatermark(v, idle) {
  const w = watermarkKind(v, idle);
  if (w.kind === 'idle') return 'idle';
  if (w.kind === 'none') return 'none';
  if (w.kind === 'max') return 'end (MAX)';
  return fmtClock(w.ms);
}

/* Full watermark for tooltips: date and time. */
export function fmtWatermarkLong(v, idle) {
  const w = watermarkKind(v, idle);
  if (w.kind !== 'time') return fmtWatermark(v, idle);
  return `${fmtTime(w.ms)}.${pad(new Date(w.ms).getMilliseconds(), 3)} (${w.ms})`;
}

/* ms-per-second (0..1000) -> "52%" */
export function fmtPerMille(v) {
  const n = num(v);
  if (n === null) return DASH;
  return Math.round(n / 10) + '%';
}

/* "RUNNING" -> "running" for CSS classes and data attributes */
export function stateKey(state) {
  return String(state || 'unknown').toLowerCase().replace(/[^a-z_]/g, '');
}

/* Shortens long ids for narrow columns, keeping the full one for a title. */
export function shortId(id, n = 8) {
  const s = String(id || '');
  return s.length > n + 1 ? s.slice(0, n) + '\u2026' : s;
}

/* Truncates text to max characters with an ellipsis. */
export function clip(text, max) {
  const s = String(text === null || text === undefined ? '' : text);
  return s.length > max ? s.slice(0, Math.max(1, max - 1)) + '\u2026' : s;
}
