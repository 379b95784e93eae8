/*
 * pages/job-rescales.js -- the job page's rescales tab.
 *
 * Lists each vertex with the parallelism it runs at (GET jobs/<jid>) and a
 * field for a new one; "Rescale" PUTs jobs/<jid>/resource-requirements with
 * lowerBound = upperBound = the fields' values, after which the JobManager
 * stops the job with a savepoint and restores it at the new parallelism (the
 * header shows why it waits, when it waits for slots). Below, the rescale
 * history (GET jobs/<jid>/rescales/history), newest first: when, outcome,
 * each vertex's parallelism before and after, and how long it took.
 */

import { h, setText, setAttr, syncKeyed, show } from '../dom.js';
import { api, seg } from '../api.js';
import { fmtTime, fmtDuration, DASH } from '../format.js';
import { errorBox, panel } from '../widgets.js';

export function createRescalesTab(jid) {
  const rows = h('tbody', { id: 'rescale-vertices' });
  const btn = h('button', { id: 'btn-rescale', class: 'btn', type: 'button' }, 'Rescale');
  const status = h('span', { id: 'rescale-status', class: 'op-text' });
  const errors = errorBox();
  const form = panel('Parallelism');
  form.body.append(
    h('table', { class: 'grid' }, h('thead', null, h('tr', null,
      h('th', null, 'Vertex'), h('th', { class: 'num' }, 'Parallelism'), h('th', null, 'New parallelism'))), rows),
    h('div', { class: 'job-actions' }, btn, status), errors.el);
  const hist = h('tbody', { id: 'rescale-history' });
  const empty = h('p', { class: 'empty' }, 'The job has not been rescaled.');
  const history = panel('Rescale history');
  history.body.append(h('table', { class: 'grid' }, h('thead', null, h('tr', null,
    h('th', null, 'Started'), h('th', null, 'Outcome'), h('th', null, 'Parallelism'),
    h('th', { class: 'num' }, 'Duration'))), hist), empty);
  const el = h('div', { class: 'tab-rescales' }, form.el, history.el);
  let live = false;

  btn.addEventListener('click', async () => {
    errors.set([]);
    const body = {};
    for (const tr of rows.children) {
      const p = Number(tr._w.input.value);
      body[tr.dataset.vertex] = { parallelism: { lowerBound: p, upperBound: p } };
    }
    btn.disabled = true;
    setText(status, 'Rescaling\u2026');
    try {
      await api.put(`jobs/${seg(jid)}/resource-requirements`, body);
      setText(status, 'Rescale requested: the job stops with a savepoint and restarts at the new parallelism.');
    } catch (e) {
      setText(status, 'Rescale refused.');
      errors.fromError(e);
    } finally {
      btn.disabled = false;
    }
  });

  return {
    el,
    async refresh(job) {
      const vs = (job && Array.isArray(job.vertices)) ? job.vertices : [];
      live = job && job.state === 'RUNNING';
      show(form.el, live);
      syncKeyed(rows, vs, (v) => v.id, createVertexRow, updateVertexRow);
      const data = await api.get(`jobs/${seg(jid)}/rescales/history`);
      const entries = Array.isArray(data) ? data : [];
      show(empty, entries.length === 0);
      setAttr(hist, 'data-count', entries.length);
      syncKeyed(hist, entries, (e) => e.rescaleUuid, createHistoryRow, updateHistoryRow);
    },
  };
}

function createVertexRow() {
  const name = h('td');
  const cur = h('td', { class: 'num' });
  const input = h('input', { type: 'number', min: '1', max: '32768', size: '6', 'aria-label': 'New parallelism' });
  const tr = h('tr', null, name, cur, h('td', null, input));
  tr._w = { name, cur, input, shown: null };
  return tr;
}

function updateVertexRow(tr, v) {
  const w = tr._w;
  tr.dataset.vertex = v.id;
  setText(w.name, v.name || v.id);
  setText(w.cur, String(v.parallelism));
  /* the field follows the running parallelism until the user types */
  if (w.shown === null || Number(w.input.value) === w.shown) w.input.value = String(v.parallelism);
  w.shown = v.parallelism;
}

function createHistoryRow() {
  const when = h('td');
  const outcome = h('td');
  const par = h('td');
  const dur = h('td', { class: 'num' });
  const tr = h('tr', null, when, outcome, par, dur);
  tr._w = { when, outcome, par, dur };
  return tr;
}

function updateHistoryRow(tr, e) {
  const w = tr._w;
  setAttr(tr, 'data-state', e.terminalState || 'IN_PROGRESS');
  setText(w.when, fmtTime(e.startTimestampInMillis));
  const why = (e.schedulerStates || []).map((s) => s.stringifiedException).filter(Boolean).pop();
  setText(w.outcome, e.terminalState ? `${e.terminalState} (${e.terminatedReason})${why ? `: ${why}` : ''}` : 'in progress');
  const vs = Object.values(e.vertices || {});
  setText(w.par, vs.map((v) => `${v.jobVertexName}: ${v.preRescaleParallelism} \u2192 ${v.postRescaleParallelism ?? '?'}`).join(', ') || DASH);
  setText(w.dur, e.endTimestampInMillis ? fmtDuration(e.endTimestampInMillis - e.startTimestampInMillis) : DASH);
}
