/*
 * pages/taskmanagers.js -- the TaskManagers and their slots (#/taskmanagers).
 *
 * Reads GET taskmanagers, then GET taskmanagers/<id> for each one (for
 * allocatedSlots) and GET jobs/overview (to name the jobs), in parallel.
 * One row per TaskManager: id, address, data port, slots used/free with a
 * bar, hardware, heartbeat age, and which jobs hold its slots (with the
 * number of slots each). timeSinceLastHeartbeat is read as an age in ms, or
 * as the epoch time of the last heartbeat when it looks like one (Flink's
 * field carries a timestamp despite its name).
 */

import { h, setText, setAttr, syncKeyed, show } from '../dom.js';
import { api, seg, optional } from '../api.js';
import { num, fmtInt, fmtBytes, fmtDuration, shortId, DASH } from '../format.js';
import { panel } from '../widgets.js';

const STALE_MS = 10000;

export function create(ctx, route) {
  const tbody = h('tbody');
  const table = h('table', { class: 'grid tm-table', id: 'taskmanagers-table' },
    h('thead', null, h('tr', null,
      h('th', null, 'TaskManager'), h('th', null, 'Address'), h('th', { class: 'num' }, 'Data port'),
      h('th', null, 'Slots'), h('th', { class: 'num' }, 'Cores'),
      h('th', { class: 'num', title: 'free / physical memory' }, 'Memory free / total'),
      h('th', { class: 'num' }, 'Managed'),
      h('th', { class: 'num' }, 'Heartbeat'), h('th', null, 'Running jobs'))),
    tbody);
  const empty = h('p', { class: 'empty' }, 'No TaskManager has registered yet. Start one with sluice-taskmanager.');
  const p = panel('TaskManagers');
  const summary = h('span', { class: 'muted', id: 'tm-summary' });
  p.extra.append(summary);
  p.body.append(h('div', { class: 'table-wrap' }, table), empty);
  const el = h('div', { id: 'taskmanagers', class: 'page' }, h('h1', { class: 'page-title' }, 'TaskManagers'), p.el);
  let highlight = route.tm;

  return {
    el,
    route(r) {
      highlight = r.tm;
    },
    async refresh() {
      const [data, jobs] = await Promise.all([api.get('taskmanagers'), optional(api.get('jobs/overview'))]);
      const tms = data && Array.isArray(data.taskmanagers) ? data.taskmanagers.slice() : [];
      tms.sort((a, b) => String(a.id).localeCompare(String(b.id)));
      const details = await Promise.all(tms.map((tm) => optional(api.get(`taskmanagers/${seg(tm.id)}`))));
      const names = new Map();
      for (const j of (jobs && Array.isArray(jobs.jobs) ? jobs.jobs : [])) names.set(j.jid, j.name);
      const rows = tms.map((tm, i) => ({ tm, detail: details[i], names }));
      show(table, rows.length > 0);
      show(empty, rows.length === 0);
      let total = 0;
      let free = 0;
      for (const tm of tms) {
        total += num(tm.slotsNumber) || 0;
        free += num(tm.freeSlots) || 0;
      }
      setText(summary, `${tms.length} TaskManager${tms.length === 1 ? '' : 's'}, ${total - free} of ${total} slots in use`);
      syncKeyed(tbody, rows, (r) => r.tm.id, createRow, (tr, r) => updateRow(tr, r, highlight));
    },
  };
}

function createRow() {
  const fill = h('div', { class: 'bar-fill' });
  const slotsText = h('span', { class: 'slots-text' });
  const running = h('ul', { class: 'allocations' });
  const tr = h('tr', { class: 'tm-row' },
    h('td', { class: 'mono tm-id' }), h('td', { class: 'mono' }), h('td', { class: 'num' }),
    h('td', { class: 'slots' }, h('div', { class: 'bar small' }, fill), slotsText),
    h('td', { class: 'num' }), h('td', { class: 'num' }), h('td', { class: 'num' }),
    h('td', { class: 'num' }), h('td', { class: 'running' }, running));
  tr._w = { fill, slotsText, running };
  return tr;
}

/* Heartbeat age in ms from timeSinceLastHeartbeat (age or epoch time). */
export function heartbeatAge(v, now) {
  const n = num(v);
  if (n === null || n < 0) return null;
  if (n > 1e12) return Math.max(0, now - n);
  return n;
}

function updateRow(tr, r, highlight) {
  const { tm, detail, names } = r;
  const c = tr.children;
  const w = tr._w;
  const hw = tm.hardware || (detail && detail.hardware) || {};
  const slots = num(tm.slotsNumber) ?? 0;
  const free = num(tm.freeSlots) ?? 0;
  const used = Math.max(0, slots - free);
  setAttr(tr, 'data-tm-id', tm.id);
  setAttr(tr, 'data-slots-total', slots);
  setAttr(tr, 'data-slots-free', free);
  tr.classList.toggle('highlight', highlight === tm.id);
  /* the id opens the TaskManager's page (its log, stdout and threads) */
  let link = c[0].firstChild;
  if (!link || link.tagName !== 'A') {
    link = h('a', { class: 'tm-link' });
    c[0].replaceChildren(link);
  }
  setText(link, tm.id);
  setAttr(link, 'href', `#/taskmanagers/${encodeURIComponent(tm.id)}/log`);
  setAttr(c[0], 'title', tm.id);
  setText(c[1], tm.path || DASH);
  setText(c[2], tm.dataPort ?? DASH);
  w.fill.style.width = slots > 0 ? `${(100 * used) / slots}%` : '0%';
  setText(w.slotsText, `${used} used \u00b7 ${free} free`);
  setAttr(w.slotsText, 'title', `${slots} slots`);
  setText(c[4], fmtInt(hw.cpuCores));
  setText(c[5], `${fmtBytes(hw.freeMemory)} / ${fmtBytes(hw.physicalMemory)}`);
  setText(c[6], fmtBytes(hw.managedMemory));
  const age = heartbeatAge(tm.timeSinceLastHeartbeat, Date.now());
  setText(c[7], age === null ? DASH : `${fmtDuration(age)} ago`);
  setAttr(c[7], 'data-heartbeat-age', age === null ? null : Math.round(age));
  c[7].classList.toggle('warn-text', age !== null && age > STALE_MS);

  const counts = new Map();
  const slotsList = detail && Array.isArray(detail.allocatedSlots) ? detail.allocatedSlots : [];
  for (const s of slotsList) {
    const jid = s && (s.jobId || s.jobid || s.jid);
    if (!jid) continue;
    counts.set(jid, (counts.get(jid) || 0) + 1);
    if (s.jobName && !names.has(jid)) names.set(jid, String(s.jobName));
  }
  const items = Array.from(counts.entries()).map(([jid, n]) => ({ jid, n, name: names.get(jid) }));
  syncKeyed(w.running, items, (x) => x.jid,
    () => h('li', { class: 'allocation' }, h('a'), h('span', { class: 'muted' })),
    (li, x) => {
      setAttr(li, 'data-jid', x.jid);
      setAttr(li, 'data-slots', x.n);
      const a = li.firstChild;
      setText(a, x.name || shortId(x.jid, 12));
      setAttr(a, 'href', `#/jobs/${encodeURIComponent(x.jid)}`);
      setAttr(a, 'title', x.jid);
      setText(li.lastChild, ` \u00d7${x.n} slot${x.n === 1 ? '' : 's'}`);
    });
  if (items.length === 0 && !w.running.querySelector('.idle-note')) {
    w.running.append(h('li', { class: 'idle-note muted' }, detail ? 'idle' : DASH));
  } else if (items.length > 0) {
    const note = w.running.querySelector('.idle-note');
    if (note) note.remove();
  }
}
