/*
 * pages/job.js -- one job (#/jobs/<jid>[/graph[/<vertex>]|/checkpoints|/exceptions|/rescales]).
 *
 * The header is refreshed from GET jobs/<jid>: name, id, state (with the
 * JobManager's state-reason when the job waits for slots or failed), times,
 * task counts, and the actions: trigger a savepoint, stop with a savepoint
 * (optionally draining), cancel (asks for confirmation inline). Savepoint
 * and stop answer with a request id; the page polls
 * jobs/<jid>/savepoints/<request-id> until COMPLETED and shows the savepoint
 * path or the failure cause. That result stays on the page across refreshes.
 *
 * Below are four tabs; each is created on first visit and kept, so coming
 * back to a tab keeps its state. Only the visible tab refreshes.
 */

import { h, setText, setAttr, show } from '../dom.js';
import { api, seg, withQuery, pollSavepoint, optional } from '../api.js';
import { fmtTime, fmtDuration } from '../format.js';
import { stateBadge, taskChips, errorBox, isTerminal } from '../widgets.js';
import { createGraphTab } from './job-graph.js';
import { createCheckpointsTab } from './job-checkpoints.js';
import { createExceptionsTab } from './job-exceptions.js';
import { createRescalesTab } from './job-rescales.js';

const TABS = [
  ['graph', 'Graph'],
  ['checkpoints', 'Checkpoints'],
  ['exceptions', 'Exceptions'],
  ['rescales', 'Rescales'],
];

export function create(ctx, firstRoute) {
  const jid = firstRoute.jid;
  const base = `#/jobs/${encodeURIComponent(jid)}`;
  let route = firstRoute;
  let job = null;

  /* ---- header ---- */
  const title = h('h1', { class: 'page-title job-title', id: 'job-name' }, jid);
  const badge = stateBadge('data-job-state');
  badge.el.id = 'job-state';
  const reason = h('div', { class: 'state-reason big', id: 'job-state-reason', hidden: true });
  /* unbounded-state warnings of the job's operators (GET sluice/jobs/<jid> "warnings") */
  const warnList = h('ul', { class: 'job-warnings-list' });
  const warnings = h('div', { class: 'job-warnings warn-text', id: 'job-warnings', hidden: true },
    h('strong', null, 'Unbounded state'), warnList);
  const fields = {};
  const field = (key, label) => {
    fields[key] = h('span', { class: 'v', dataset: { field: key } }, '\u2014');
    return h('span', { class: 'meta-item' }, h('span', { class: 'k' }, label), fields[key]);
  };
  const chips = taskChips();
  const meta = h('div', { class: 'job-meta' },
    h('span', { class: 'meta-item' }, h('span', { class: 'k' }, 'ID'), h('span', { class: 'v mono', id: 'job-id' }, jid)),
    field('start-time', 'Start'), field('end-time', 'End'), field('duration', 'Duration'),
    field('parallelism', 'Max parallelism'), field('slots-needed', 'Slots needed'),
    h('span', { class: 'meta-item' }, h('span', { class: 'k' }, 'Vertices'), chips.el));

  /* ---- actions ---- */
  const dirInput = h('input', { id: 'savepoint-dir', type: 'text', placeholder: 'savepoint directory (default: state.savepoints.dir)',
    'aria-label': 'Savepoint target directory', size: '44' });
  const drain = h('input', { id: 'stop-drain', type: 'checkbox' });
  const btnSavepoint = h('button', { id: 'btn-savepoint', class: 'btn', type: 'button' }, 'Trigger savepoint');
  const btnStop = h('button', { id: 'btn-stop', class: 'btn', type: 'button' }, 'Stop with savepoint');
  const btnCancel = h('button', { id: 'btn-cancel', class: 'btn danger', type: 'button' }, 'Cancel job');
  const btnCancelYes = h('button', { id: 'btn-cancel-confirm', class: 'btn danger', type: 'button' }, 'Yes, cancel the job');
  const btnCancelNo = h('button', { id: 'btn-cancel-abort', class: 'btn ghost', type: 'button' }, 'Keep it running');
  const confirmBox = h('span', { class: 'confirm', hidden: true }, btnCancelYes, btnCancelNo);
  const actions = h('div', { class: 'job-actions', id: 'job-actions' },
    dirInput, h('label', { class: 'check' }, drain, ' drain'), btnSavepoint, btnStop, btnCancel, confirmBox);
  const opText = h('span', { class: 'op-text' });
  const spPath = h('code', { id: 'savepoint-result' });
  const opStatus = h('div', { id: 'job-action-status', class: 'op-status', hidden: true }, opText, ' ', spPath);
  const errors = errorBox();

  const header = h('section', { class: 'job-header panel' },
    h('div', { class: 'job-head-row' }, h('div', { class: 'job-head-title' }, title, badge.el)),
    reason, warnings, meta, actions, opStatus, errors.el);

  /* ---- tabs ---- */
  const tabLinks = {};
  const tabBar = h('nav', { class: 'tabs', id: 'job-tabs' }, TABS.map(([key, label]) => {
    tabLinks[key] = h('a', { href: `${base}/${key}`, dataset: { tab: key } }, label);
    return tabLinks[key];
  }));
  const tabBody = h('div', { class: 'tab-body' });
  const tabs = {}; /* key -> tab object, created lazily */

  const el = h('div', { id: 'job', class: 'page', dataset: { jid } }, header, tabBar, tabBody);

  function tab(key) {
    if (!tabs[key]) {
      if (key === 'graph') {
        tabs[key] = createGraphTab(jid, (vid) => ctx.replaceRoute(vid ? `${base}/graph/${encodeURIComponent(vid)}` : `${base}/graph`));
      } else if (key === 'checkpoints') {
        tabs[key] = createCheckpointsTab(jid);
      } else if (key === 'rescales') {
        tabs[key] = createRescalesTab(jid);
      } else {
        tabs[key] = createExceptionsTab(jid);
      }
      tabs[key].el.dataset.tabPanel = key;
      tabBody.append(tabs[key].el);
    }
    return tabs[key];
  }

  let shownTab = null;
  function applyRoute(r) {
    route = r;
    for (const [key] of TABS) {
      tabLinks[key].classList.toggle('active', key === r.tab);
      setAttr(tabLinks[key], 'aria-selected', key === r.tab ? 'true' : 'false');
    }
    const t = tab(r.tab);
    for (const [key, other] of Object.entries(tabs)) show(other.el, key === r.tab);
    setAttr(el, 'data-tab', r.tab);
    if (r.tab === 'graph') t.select(r.vertex);
    if (shownTab !== r.tab) {
      shownTab = r.tab;
      if (job) t.refresh(job).catch(() => {}); /* the loop reports errors */
    }
  }

  /* ---- actions wiring ---- */
  let busy = false;
  let confirmTimer = null;
  const setBusy = (b) => {
    busy = b;
    for (const b2 of [btnSavepoint, btnStop, btnCancel, btnCancelYes]) b2.disabled = b;
  };
  const opState = (state, text, path) => {
    show(opStatus, true);
    setAttr(opStatus, 'data-op-state', state);
    setText(opText, text);
    setText(spPath, path || '');
    show(spPath, !!path);
    setAttr(spPath, 'data-savepoint-path', path || null);
  };

  async function runSavepoint(stop) {
    if (busy) return;
    errors.set([]);
    setBusy(true);
    const dir = dirInput.value.trim();
    const what = stop ? (drain.checked ? 'Draining and stopping' : 'Stopping') + ' job with a savepoint' : 'Triggering savepoint';
    opState('pending', `${what}\u2026`);
    try {
      let resp;
      if (stop) {
        const body = { drain: drain.checked };
        if (dir) body.targetDirectory = dir;
        resp = await api.post(`jobs/${seg(jid)}/stop`, body);
      } else {
        const body = { 'cancel-job': false };
        if (dir) body['target-directory'] = dir;
        resp = await api.post(`jobs/${seg(jid)}/savepoints`, body);
      }
      const rid = resp && resp['request-id'];
      if (!rid) throw new Error('the server did not return a request-id');
      setAttr(opStatus, 'data-request-id', rid);
      const result = await pollSavepoint(jid, rid, (st) => opState('pending', `${what}\u2026 (${st.toLowerCase().replace('_', ' ')})`));
      if (result.failure !== undefined) {
        opState('failed', 'Savepoint failed:');
        errors.set([result.failure]);
      } else {
        opState('completed', stop ? 'Job stopped. Savepoint completed. Path:' : 'Savepoint completed. Path:', result.location);
      }
    } catch (e) {
      opState('failed', stop ? 'Stop with savepoint failed.' : 'Savepoint failed.');
      errors.fromError(e);
    } finally {
      setBusy(false);
    }
  }

  btnSavepoint.addEventListener('click', () => runSavepoint(false));
  btnStop.addEventListener('click', () => runSavepoint(true));
  btnCancel.addEventListener('click', () => {
    show(confirmBox, true);
    show(btnCancel, false);
    clearTimeout(confirmTimer);
    confirmTimer = setTimeout(() => { show(confirmBox, false); show(btnCancel, true); }, 8000);
  });
  btnCancelNo.addEventListener('click', () => { show(confirmBox, false); show(btnCancel, true); });
  btnCancelYes.addEventListener('click', async () => {
    clearTimeout(confirmTimer);
    show(confirmBox, false);
    show(btnCancel, true);
    errors.set([]);
    setBusy(true);
    opState('pending', 'Cancelling job\u2026');
    try {
      await api.patch(withQuery(`jobs/${seg(jid)}`, { mode: 'cancel' }));
      opState('completed', 'Cancellation requested.');
    } catch (e) {
      opState('failed', 'Cancel failed.');
      errors.fromError(e);
    } finally {
      setBusy(false);
    }
  });

  function updateHeader(j) {
    const state = String(j.state || 'UNKNOWN');
    setText(title, j.name || jid);
    document.title = `${j.name || jid} \u2013 Sluice`;
    badge.update(state);
    setAttr(el, 'data-state', state);
    const own = j.sluice || {}; /* GET sluice/jobs/<jid>: what Flink's job details have no field for */
    const r = own['state-reason'] ? String(own['state-reason']) : '';
    setText(reason, r);
    show(reason, r !== '');
    const ws = Array.isArray(own.warnings) ? own.warnings : [];
    warnList.replaceChildren(...ws.map((w) => h('li', { dataset: { vertex: w.vertex || '', setting: w.setting || '' } },
      String(w.message || ''))));
    show(warnings, ws.length > 0);
    setText(fields['start-time'], fmtTime(j['start-time']));
    setText(fields['end-time'], fmtTime(j['end-time']));
    setText(fields.duration, fmtDuration(j.duration));
    setText(fields.parallelism, j.maxParallelism !== undefined && j.maxParallelism !== null ? String(j.maxParallelism) : '\u2014');
    const slots = own['slots-needed'];
    setText(fields['slots-needed'], slots !== undefined && slots !== null ? String(slots) : '\u2014');
    show(fields['slots-needed'].parentNode, slots !== undefined && slots !== null);
    chips.update(j['status-counts'] || {});
    const features = (ctx.config && ctx.config.features) || {};
    const live = !isTerminal(state);
    show(actions, live && features['web-cancel'] !== false);
    show(btnStop, state === 'RUNNING');
    show(btnSavepoint, state === 'RUNNING');
    show(dirInput, state === 'RUNNING');
    show(drain.parentNode, state === 'RUNNING');
  }

  applyRoute(firstRoute);

  return {
    el,
    route: applyRoute,
    async refresh() {
      const [j, own] = await Promise.all([api.get(`jobs/${seg(jid)}`), optional(api.get(`sluice/jobs/${seg(jid)}`))]);
      job = Object.assign({}, j || {}, { sluice: own || {} });
      updateHeader(job);
      await tab(route.tab).refresh(job);
    },
    destroy() {
      clearTimeout(confirmTimer);
      document.title = 'Sluice Dashboard';
    },
  };
}
