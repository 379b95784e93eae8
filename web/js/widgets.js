/*
 * widgets.js -- pieces several pages share: panels, state badges, task-count
 * chips, error boxes, key/value grids and the jobs table.
 *
 * Each widget is a small object {el, update(...)} built once and patched on
 * every refresh through dom.js, so rows keep their identity (and the page
 * does not flicker) while the numbers move.
 */

import { h, setText, setAttr, syncKeyed, show, replaceChildren } from './dom.js';
import { fmtTime, fmtDuration, stateKey, DASH } from './format.js';

/* Job states that will not change any more. */
export const TERMINAL_STATES = new Set(['FINISHED', 'CANCELED', 'CANCELLED', 'FAILED', 'SUSPENDED']);

export function isTerminal(state) {
  return TERMINAL_STATES.has(String(state || '').toUpperCase());
}

/* A titled white panel: {el, body, title, extra}. */
export function panel(title, props) {
  const titleEl = h('h2', { class: 'panel-title' }, title);
  const extra = h('div', { class: 'panel-extra' });
  const body = h('div', { class: 'panel-body' });
  const el = h('section', Object.assign({ class: 'panel' }, props || {}),
    h('header', { class: 'panel-head' }, titleEl, extra), body);
  return { el, body, title: titleEl, extra };
}

/* A coloured state badge; update(state) patches text, class and data. */
export function stateBadge(attrName) {
  const el = h('span', { class: 'badge' });
  return {
    el,
    update(state) {
      const st = state ? String(state) : 'UNKNOWN';
      setText(el, st);
      setAttr(el, 'class', `badge state-${stateKey(st)}`);
      if (attrName) setAttr(el, attrName, st);
    },
  };
}

const TASK_ORDER = ['created', 'scheduled', 'deploying', 'initializing', 'running', 'finished',
  'canceling', 'canceled', 'failed', 'reconciling'];

/* Task counts per state as small chips, like Flink's task bar. */
export function taskChips() {
  const el = h('span', { class: 'task-chips' });
  return {
    el,
    update(tasks) {
      const counts = [];
      if (tasks && typeof tasks === 'object') {
        const lower = {};
        for (const [k, v] of Object.entries(tasks)) lower[k.toLowerCase()] = Number(v) || 0;
        for (const k of TASK_ORDER) if (lower[k] > 0) counts.push([k, lower[k]]);
        for (const [k, v] of Object.entries(lower)) {
          if (k !== 'total' && !TASK_ORDER.includes(k) && v > 0) counts.push([k, v]);
        }
      }
      syncKeyed(el, counts, (c) => c[0],
        (c) => h('span', { class: `chip state-${stateKey(c[0])}`, title: c[0], dataset: { taskState: c[0] } }),
        (chip, c) => setText(chip, String(c[1])));
    },
  };
}

/* An error list; set([]) hides it. Messages are shown verbatim. */
export function errorBox() {
  const list = h('ul');
  const el = h('div', { class: 'errors', role: 'alert', dataset: { role: 'errors' }, hidden: true }, list);
  return {
    el,
    set(messages) {
      const msgs = (messages || []).map(String);
      replaceChildren(list, msgs.map((m) => h('li', null, m)));
      show(el, msgs.length > 0);
    },
    fromError(e) {
      this.set(e && e.messages ? e.messages : [String(e && e.message ? e.message : e)]);
    },
  };
}

/* A two-column grid of label/value pairs; update([[label, value], ...]). */
export function kvGrid(props) {
  const el = h('dl', Object.assign({ class: 'kv' }, props || {}));
  return {
    el,
    update(pairs) {
      syncKeyed(el, pairs, (p) => p[0],
        (p) => h('div', { class: 'kv-item' }, h('dt', null, p[0]), h('dd')),
        (item, p) => {
          const dd = item.lastChild;
          setText(dd, p[1] === null || p[1] === undefined || p[1] === '' ? DASH : p[1]);
          if (p[2]) setAttr(dd, 'data-field', p[2]);
        });
    },
  };
}

/*
 * The jobs table: name (with state-reason), id, state, start, end, duration,
 * tasks. Rows are <tr class="job-row" data-jid data-job-state> and open the
 * job page when clicked. emptyText is shown when there are no rows.
 */
export function jobTable(navigate, emptyText) {
  const tbody = h('tbody');
  const empty = h('p', { class: 'empty' }, emptyText);
  const table = h('table', { class: 'grid jobs-table' },
    h('thead', null, h('tr', null,
      h('th', null, 'Job name'), h('th', null, 'Job ID'), h('th', null, 'State'),
      h('th', null, 'Start time'), h('th', null, 'End time'), h('th', { class: 'num' }, 'Duration'),
      h('th', null, 'Tasks'))),
    tbody);
  const el = h('div', { class: 'table-wrap' }, table, empty);
  return {
    el,
    update(jobs) {
      show(table, jobs.length > 0);
      show(empty, jobs.length === 0);
      syncKeyed(tbody, jobs, (j) => j.jid, (j) => createJobRow(j, navigate), updateJobRow);
    },
  };
}

function createJobRow(job, navigate) {
  const link = h('a', { class: 'job-name' });
  const reason = h('div', { class: 'state-reason', hidden: true });
  const badge = stateBadge();
  const chips = taskChips();
  const tr = h('tr', { class: 'job-row', tabindex: '0' },
    h('td', { class: 'name-cell' }, link, reason),
    h('td', { class: 'mono' }, h('span', { class: 'jid' })),
    h('td', null, badge.el),
    h('td', { class: 'start' }), h('td', { class: 'end' }), h('td', { class: 'num duration' }),
    h('td', null, h('span', { class: 'task-total' }), ' ', chips.el));
  tr._w = { link, reason, badge, chips };
  const go = (ev) => {
    if (ev.target.closest('a')) return; /* the link navigates by itself */
    navigate(`#/jobs/${encodeURIComponent(tr.dataset.jid)}`);
  };
  tr.addEventListener('click', go);
  tr.addEventListener('keydown', (ev) => { if (ev.key === 'Enter') go(ev); });
  return tr;
}

function updateJobRow(tr, job) {
  const w = tr._w;
  const state = String(job.state || job.status || 'UNKNOWN');
  setAttr(tr, 'data-jid', job.jid);
  setAttr(tr, 'data-job-state', state);
  setText(w.link, job.name || job.jid);
  setAttr(w.link, 'href', `#/jobs/${encodeURIComponent(job.jid)}`);
  const reason = job['state-reason'] ? String(job['state-reason']) : '';
  setText(w.reason, reason);
  show(w.reason, reason !== '');
  const jidEl = tr.children[1].firstChild;
  setText(jidEl, job.jid);
  w.badge.update(state);
  setText(tr.children[3], fmtTime(job['start-time']));
  setText(tr.children[4], fmtTime(job['end-time']));
  setText(tr.children[5], fmtDuration(job.duration));
  const tasks = job.tasks || {};
  setText(tr.children[6].firstChild, tasks.total !== undefined ? String(tasks.total) : '');
  w.chips.update(tasks);
}
