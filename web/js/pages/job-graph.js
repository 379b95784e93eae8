/*
 * pages/job-graph.js -- the job page's graph tab: dataflow graph, vertex
 * table and the selected vertex's subtasks.
 *
 * Per refresh, for every vertex of GET jobs/<jid> it reads
 *   subtasks/metrics?get=busyTimeMsPerSecond,backPressuredTimeMsPerSecond,
 *       idleTimeMsPerSecond&agg=max     -> colour (max over subtasks)
 *   backpressure                        -> level badge (ok/low/high)
 *   sluice/jobs/<jid>/vertices/<vid>/subtasks
 *                                       -> records, rates, watermarks (with
 *                                          whether idle), late drops
 * in parallel. If "subtasks" is unavailable it falls back to
 * subtasks/metrics?agg=sum and the watermarks endpoint; if the aggregated
 * metrics are unavailable, the maxima are taken from "subtasks". Records
 * in/out fall back to the vertex's read-records/write-records.
 *
 * The vertex watermark is the minimum input watermark over subtasks that are
 * not idle (output watermark for sources, which have no input); idle
 * subtasks are counted and named, and a vertex whose subtasks are all idle
 * shows "idle" -- never NaN.
 */

import { h, setText, setAttr, syncKeyed, show } from '../dom.js';
import { api, seg, optional } from '../api.js';
import { JobGraph, nameLines } from '../graph.js';
import { vertexFill, vertexBorder, bpLevel, perMille, normLevel, COLOR_IDLE, COLOR_BUSY, COLOR_BACKPRESSURED } from '../colors.js';
import { num, fmtInt, fmtCompact, fmtRate, fmtPerMille, fmtWatermark, fmtWatermarkLong, watermarkKind, fmtDuration, fmtTime, stateKey, fmtBytes, DASH } from '../format.js';
import { panel, stateBadge } from '../widgets.js';
import { createFlameGraph } from '../flamegraph.js';

const COLOUR_METRICS = 'busyTimeMsPerSecond,backPressuredTimeMsPerSecond,idleTimeMsPerSecond';
const SUM_METRICS = 'numRecordsIn,numRecordsOut,numRecordsInPerSecond,numRecordsOutPerSecond,numLateRecordsDropped';

/* Value of metric `id` with aggregate `agg` from an agg=... answer. */
function aggValue(list, id, agg) {
  if (!Array.isArray(list)) return null;
  const m = list.find((x) => x && x.id === id);
  return m ? num(m[agg]) : null;
}

/* Sum of a metric over a subtasks list (null when no subtask has it). */
function sumOf(subtasks, key) {
  let total = null;
  for (const st of subtasks) {
    const v = num(st.metrics && st.metrics[key]);
    if (v !== null) total = (total || 0) + v;
  }
  return total;
}

function maxOf(subtasks, key) {
  let best = null;
  for (const st of subtasks) {
    const v = num(st.metrics && st.metrics[key]);
    if (v !== null) best = best === null ? v : Math.max(best, v);
  }
  return best;
}

/*
 * Watermark summary over subtasks: {kind, ms, idle, total}.
 * kind: 'time' | 'none' | 'idle' | 'max'.
 */
export function vertexWatermark(subtasks, useOutput) {
  const key = useOutput ? 'currentOutputWatermark' : 'currentInputWatermark';
  let idle = 0;
  let low = null;
  let none = false;
  let max = 0;
  for (const st of subtasks) {
    const m = st.metrics || {};
    if (m.watermarkIdle === true || m.watermarkIdle === 'true') {
      idle++;
      continue;
    }
    const w = watermarkKind(m[key], false);
    if (w.kind === 'none') none = true;
    else if (w.kind === 'max') max++;
    else low = low === null ? w.ms : Math.min(low, w.ms);
  }
  const total = subtasks.length;
  if (total > 0 && idle === total) return { kind: 'idle', ms: null, idle, total };
  if (none || (low === null && max === 0)) return { kind: 'none', ms: null, idle, total };
  if (low === null) return { kind: 'max', ms: null, idle, total };
  return { kind: 'time', ms: low, idle, total };
}

function watermarkText(wm) {
  if (wm.kind === 'idle') return 'idle';
  if (wm.kind === 'none') return 'none';
  const base = wm.kind === 'max' ? 'end (MAX)' : fmtWatermark(wm.ms, false);
  return wm.idle > 0 ? `${base} (${wm.idle} idle)` : base;
}

/* Loads everything shown for one vertex; never throws. */
async function loadVertex(jid, v) {
  const vbase = `jobs/${seg(jid)}/vertices/${seg(v.id)}`;
  const [agg, bp, subs] = await Promise.all([
    optional(api.get(`${vbase}/subtasks/metrics?get=${COLOUR_METRICS}&agg=max`)),
    optional(api.get(`${vbase}/backpressure`)),
    optional(api.get(`sluice/${vbase}/subtasks`)),
  ]);
  let subtasks = subs && Array.isArray(subs.subtasks) ? subs.subtasks : null;
  let sums = null;
  let marks = null;
  if (!subtasks) {
    [sums, marks] = await Promise.all([
      optional(api.get(`${vbase}/subtasks/metrics?get=${SUM_METRICS}&agg=sum`)),
      optional(api.get(`${vbase}/watermarks`)),
    ]);
  }
  return { agg, bp, subtasks, sums, marks };
}

/* Derives everything the graph, the table and the badge show for a vertex. */
function vertexView(v, data, isSource) {
  const subs = data.subtasks || [];
  /* max over subtasks: aggregated metrics, else the subtasks list, else the
   * ratios the backpressure endpoint reports per subtask */
  const bpSubs = data.bp && Array.isArray(data.bp.subtasks) ? data.bp.subtasks : [];
  const pick = (key, ratioKey) => {
    const a = aggValue(data.agg, key, 'max');
    if (a !== null) return a;
    const m = maxOf(subs, key);
    if (m !== null) return m;
    let best = null;
    for (const st of bpSubs) {
      const r = num(st[ratioKey]);
      if (r !== null) best = Math.max(best === null ? 0 : best, r * 1000);
    }
    return best;
  };
  const busyRaw = pick('busyTimeMsPerSecond', 'busyRatio');
  const bpRaw = pick('backPressuredTimeMsPerSecond', 'ratio');
  /* a vertex none of whose subtasks runs yet (waiting for slots, deploying) has no load to
   * judge: its zeros are no "OK" */
  const running = data.subtasks ? subs.some((st) => st && st.status === 'RUNNING') : v.status === 'RUNNING';
  const hasLoad = running && (busyRaw !== null || bpRaw !== null);
  const busy = perMille(busyRaw);
  const backpressured = perMille(bpRaw);
  const idleRaw = pick('idleTimeMsPerSecond', 'idleRatio');
  const idle = idleRaw === null ? null : perMille(idleRaw);
  let level = null;
  if (data.bp && data.bp.status !== 'deprecated') {
    level = normLevel(data.bp['backpressure-level'] || data.bp.backpressureLevel);
  }
  if (!level) level = bpLevel(backpressured);

  const vm = v.metrics || {};
  const sum = (key) => (data.subtasks ? sumOf(subs, key) : aggValue(data.sums, key, 'sum'));
  let recIn = sum('numRecordsIn');
  let recOut = sum('numRecordsOut');
  if (recIn === null) recIn = num(vm['read-records']);
  if (recOut === null) recOut = num(vm['write-records']);
  const rateIn = sum('numRecordsInPerSecond');
  const rateOut = sum('numRecordsOutPerSecond');
  const late = sum('numLateRecordsDropped');
  const stateEntries = sum('stateEntries');
  const stateBytes = sum('stateSizeBytes');

  let wm;
  if (data.subtasks && subs.length) {
    wm = vertexWatermark(subs, isSource);
  } else if (Array.isArray(data.marks)) {
    const suffix = isSource ? '.currentOutputWatermark' : '.currentInputWatermark';
    const list = data.marks.filter((m) => m && typeof m.id === 'string' && m.id.endsWith(suffix))
      /* Flink's watermarks endpoint does not say which subtasks are idle */
      .map((m) => ({ metrics: { [suffix.slice(1)]: m.value, watermarkIdle: false } }));
    wm = list.length ? vertexWatermark(list, isSource) : { kind: 'none', ms: null, idle: 0, total: 0 };
  } else {
    wm = { kind: 'none', ms: null, idle: 0, total: 0 };
  }

  return {
    busy, backpressured, idle, level, hasLoad, recIn, recOut, rateIn, rateOut, late, wm,
    stateEntries, stateBytes,
    fill: vertexFill(busy, backpressured),
    border: vertexBorder(busy, backpressured),
  };
}

export function createGraphTab(jid, onSelect) {
  let selected = null;
  let lastJob = null;
  let vertexData = new Map(); /* vid -> loaded data */

  const graph = new JobGraph((vid) => onSelect(vid === selected ? null : vid));
  const legend = h('div', { class: 'legend' },
    h('span', { class: 'legend-item' }, h('i', { class: 'swatch', dataset: { color: COLOR_IDLE } }), 'idle'),
    h('span', { class: 'legend-item' }, h('i', { class: 'swatch', dataset: { color: COLOR_BUSY } }), 'busy'),
    h('span', { class: 'legend-item' }, h('i', { class: 'swatch', dataset: { color: COLOR_BACKPRESSURED } }), 'backpressured'),
    h('span', { class: 'legend-note' }, 'colour = max over subtasks; a red vertex downstream of grey ones is the bottleneck'));
  for (const sw of legend.querySelectorAll('.swatch')) sw.style.background = sw.dataset.color;
  const graphPanel = panel('Dataflow graph');
  graphPanel.extra.append(legend);
  const graphWrap = h('div', { class: 'graph-wrap' }, graph.svg);
  graphPanel.body.append(graphWrap);
  if (typeof ResizeObserver === 'function') new ResizeObserver(() => graph.fitToContainer()).observe(graphWrap);

  /* vertex table */
  const vbody = h('tbody');
  const vtable = h('table', { class: 'grid vertices-table', id: 'vertices-table' },
    h('thead', null, h('tr', null,
      h('th', null, 'Vertex'), h('th', null, 'Status'), h('th', { class: 'num', title: 'parallelism' }, 'Par.'),
      h('th', { class: 'num', title: 'records received' }, 'Records in'), h('th', { class: 'num', title: 'records sent' }, 'Out'),
      h('th', { class: 'num' }, 'In/s'), h('th', { class: 'num' }, 'Out/s'),
      h('th', { class: 'num', title: 'busy time, max over subtasks' }, 'Busy'),
      h('th', { class: 'num', title: 'backpressured time, max over subtasks' }, 'Backpr.'),
      h('th', null, 'Level'), h('th', null, 'Watermark'), h('th', { class: 'num', title: 'late records dropped' }, 'Late'),
      h('th', { class: 'num', title: 'keyed state entries, live (e.g. a join: one per distinct row and side)' }, 'State'),
      h('th', { class: 'num', title: 'keyed state size: bytes of keys and values, live' }, 'State size'))),
    vbody);
  const vpanel = panel('Vertices');
  vpanel.body.append(h('div', { class: 'table-wrap' }, vtable));

  /* subtasks of the selected vertex */
  const sbody = h('tbody');
  const stable = h('table', { class: 'grid subtasks-table' },
    h('thead', null, h('tr', null,
      h('th', { class: 'num' }, '#'), h('th', null, 'TaskManager'), h('th', null, 'Status'),
      h('th', { class: 'num', title: 'records received' }, 'Records in'), h('th', { class: 'num', title: 'records sent' }, 'Out'),
      h('th', { class: 'num' }, 'In/s'), h('th', { class: 'num' }, 'Out/s'),
      h('th', { class: 'num' }, 'Busy'), h('th', { class: 'num', title: 'backpressured' }, 'Backpr.'), h('th', { class: 'num' }, 'Idle'),
      h('th', null, 'Input WM'), h('th', null, 'Output WM'), h('th', { class: 'num', title: 'late records dropped' }, 'Late'))),
    sbody);
  const sEmpty = h('p', { class: 'empty' }, 'No subtask information for this vertex.');
  const spanel = panel('Subtasks', { id: 'subtasks', hidden: true });
  const sclose = h('button', { class: 'btn small ghost', type: 'button', id: 'subtasks-close' }, 'Close');
  sclose.addEventListener('click', () => onSelect(null));
  spanel.extra.append(sclose);
  /* the selected vertex's views, as Flink's vertex drawer: subtasks, flame graph */
  let vtab = 'subtasks';
  const flame = createFlameGraph(jid);
  const swrap = h('div', { class: 'table-wrap' }, stable);
  const vtabLinks = [['subtasks', 'SubTasks'], ['flamegraph', 'Flame Graph']].map(([key, label]) =>
    h('a', { href: '#', dataset: { vertexTab: key }, id: `vertex-tab-${key}`,
      onClick: (e) => { e.preventDefault(); vtab = key; paintVertexTab(); paintDrawer(); } }, label));
  const vtabBar = h('nav', { class: 'tabs vertex-tabs' }, vtabLinks);
  spanel.body.append(vtabBar, swrap, sEmpty, flame.el);
  function paintVertexTab() {
    for (const a of vtabLinks) a.classList.toggle('active', a.dataset.vertexTab === vtab);
    show(swrap, vtab === 'subtasks');
    show(flame.el, vtab === 'flamegraph');
    if (vtab !== 'subtasks') show(sEmpty, false);
    const sv = selected && lastJob && (lastJob.vertices || []).find((x) => x.id === selected);
    flame.select(vtab === 'flamegraph' ? selected : null, sv ? num(sv.parallelism) || 0 : 0);
    if (vtab === 'subtasks' && selected && lastJob) paintSubtasks();
    if (vtab === 'flamegraph' && selected) {
      const v = lastJob && (lastJob.vertices || []).find((x) => x.id === selected);
      setText(spanel.title, `Flame graph of ${v ? v.name || v.id : selected}`);
    }
  }
  const hint = h('p', { class: 'hint', id: 'graph-hint' }, 'Click a vertex to see its subtasks.');

  /* the subtask drawer: a subtask row clicked opens that subtask's own view
   * (where it runs, its state) with its flame graph (subtaskindex=i) */
  let drawerSub = null;
  const dflame = createFlameGraph(jid, 'subtask-flamegraph');
  const dfacts = h('p', { class: 'hint', id: 'subtask-drawer-facts' });
  const dpanel = panel('Subtask', { id: 'subtask-drawer', hidden: true });
  const dclose = h('button', { class: 'btn small ghost', type: 'button', id: 'subtask-drawer-close' }, 'Close');
  dclose.addEventListener('click', () => openDrawer(null));
  dpanel.extra.append(dclose);
  dpanel.body.append(dfacts, dflame.el);
  show(dflame.el, true);
  sbody.addEventListener('click', (ev) => {
    const tr = ev.target.closest('.subtask-row');
    if (!tr) return;
    const i = Number(tr.dataset.subtask);
    openDrawer(drawerSub === i ? null : i);
  });
  function openDrawer(i) {
    drawerSub = i;
    paintDrawer();
  }
  function paintDrawer() {
    const open = !!selected && drawerSub !== null && vtab === 'subtasks';
    show(dpanel.el, open);
    setAttr(dpanel.el, 'data-subtask', open ? String(drawerSub) : null);
    setAttr(dpanel.el, 'data-vertex-id', open ? selected : null);
    for (const tr of sbody.children) tr.classList.toggle('selected', open && Number(tr.dataset.subtask) === drawerSub);
    dflame.selectOne(open ? selected : null, drawerSub);
    if (!open) return;
    const v = lastJob && (lastJob.vertices || []).find((x) => x.id === selected);
    setText(dpanel.title, `Subtask ${drawerSub} of ${v ? v.name || v.id : selected}`);
    const data = vertexData.get(selected);
    const st = data && data.subtasks ? data.subtasks.find((x) => num(x.subtask) === drawerSub) : null;
    setText(dfacts, st ? `TaskManager ${st['taskmanager-id'] || st.host || DASH} \u00b7 ${st.status || DASH} \u00b7 flame graph of this subtask's thread`
      : 'flame graph of this subtask\u2019s thread');
  }

  const el = h('div', { class: 'tab-graph' }, graphPanel.el, hint, spanel.el, dpanel.el, vpanel.el);

  function paintSelection() {
    graph.select(selected);
    for (const tr of vbody.children) tr.classList.toggle('selected', tr.dataset.vertexId === selected);
    show(spanel.el, !!selected);
    show(hint, !selected);
    setAttr(spanel.el, 'data-vertex-id', selected);
    if (dpanel.el.dataset.vertexId && dpanel.el.dataset.vertexId !== selected) drawerSub = null;
    paintVertexTab();
    paintDrawer();
  }

  function paintSubtasks() {
    const v = (lastJob.vertices || []).find((x) => x.id === selected);
    setText(spanel.title, v ? `Subtasks of ${v.name || v.id}` : `Subtasks of ${selected}`);
    const data = vertexData.get(selected);
    const subs = data && data.subtasks ? data.subtasks.slice() : [];
    subs.sort((a, b) => (num(a.subtask) || 0) - (num(b.subtask) || 0));
    show(stable, subs.length > 0);
    show(sEmpty, subs.length === 0 && vtab === 'subtasks');
    syncKeyed(sbody, subs, (st) => st.subtask, createSubtaskRow, (tr, st) => {
      updateSubtaskRow(tr, st);
      tr.classList.toggle('selected', num(st.subtask) === drawerSub);
    });
  }

  return {
    el,
    select(vid) {
      selected = vid || null;
      paintSelection();
    },
    async refresh(job) {
      lastJob = job;
      const vertices = Array.isArray(job.vertices) ? job.vertices : [];
      const planNodes = job.plan && Array.isArray(job.plan.nodes) ? job.plan.nodes : [];
      const names = new Map(vertices.map((v) => [v.id, v.name]));
      /* plan nodes drive the graph; vertices without a plan node still get one */
      const nodes = planNodes.map((n) => ({
        id: String(n.id),
        lines: nameLines(names.get(n.id) || n.description || n.operator || n.id),
        inputs: (Array.isArray(n.inputs) ? n.inputs : []).map((i) => ({ id: String(i.id), ship_strategy: i.ship_strategy || '' })),
      }));
      for (const v of vertices) {
        if (!nodes.find((n) => n.id === v.id)) nodes.push({ id: v.id, lines: nameLines(v.name), inputs: [] });
      }
      const sources = new Set(nodes.filter((n) => n.inputs.length === 0).map((n) => n.id));
      graph.setPlan(nodes);
      graph.ensureFitted();

      const loaded = await Promise.all(vertices.map((v) => loadVertex(job.jid || jid, v)));
      vertexData = new Map(vertices.map((v, i) => [v.id, loaded[i]]));
      const views = new Map();
      vertices.forEach((v, i) => views.set(v.id, vertexView(v, loaded[i], sources.has(v.id))));

      for (const v of vertices) {
        const vw = views.get(v.id);
        graph.update(v.id, {
          busy: vw.busy,
          backpressured: vw.backpressured,
          level: vw.level,
          measured: vw.hasLoad,
          fill: vw.fill,
          border: vw.border,
          watermarkAttr: vw.wm.kind === 'time' ? String(vw.wm.ms) : vw.wm.kind,
          late: vw.late === null ? null : String(vw.late),
          text: {
            status: `parallelism ${v.parallelism ?? DASH} \u00b7 ${v.status || DASH}`,
            in: `in ${fmtCompact(vw.recIn)} \u00b7 ${fmtRate(vw.rateIn)}`,
            out: `out ${fmtCompact(vw.recOut)} \u00b7 ${fmtRate(vw.rateOut)}`,
            watermark: `${sources.has(v.id) ? 'out watermark' : 'watermark'} ${watermarkText(vw.wm)}`,
            load: vw.hasLoad
              ? `busy ${fmtPerMille(vw.busy)} \u00b7 bp ${fmtPerMille(vw.backpressured)} \u00b7 late ${fmtCompact(vw.late ?? 0)}`
              : `busy ${DASH} \u00b7 bp ${DASH} \u00b7 late ${fmtCompact(vw.late ?? 0)}`,
          },
        });
      }

      syncKeyed(vbody, vertices, (v) => v.id, (v) => createVertexRow(v, onSelect, () => selected),
        (tr, v) => updateVertexRow(tr, v, views.get(v.id), sources.has(v.id)));
      paintSelection();
      if (vtab === 'flamegraph') await flame.refresh(); /* until its sampling has ended */
      if (drawerSub !== null && selected && vtab === 'subtasks') await dflame.refresh();
    },
  };
}

function createVertexRow(v, onSelect, getSelected) {
  const badge = stateBadge();
  const level = h('span', { class: 'bp-pill' });
  const tr = h('tr', { class: 'vertex-row', tabindex: '0' },
    h('td', { class: 'name-cell' }, h('span', { class: 'vname' })),
    h('td', null, badge.el),
    h('td', { class: 'num' }), h('td', { class: 'num' }), h('td', { class: 'num' }),
    h('td', { class: 'num' }), h('td', { class: 'num' }),
    h('td', { class: 'num' }), h('td', { class: 'num' }),
    h('td', null, level), h('td', { class: 'wm' }), h('td', { class: 'num' }),
    h('td', { class: 'num state-entries' }), h('td', { class: 'num state-bytes' }));
  tr._w = { badge, level };
  const toggle = () => onSelect(getSelected() === tr.dataset.vertexId ? null : tr.dataset.vertexId);
  tr.addEventListener('click', toggle);
  tr.addEventListener('keydown', (ev) => { if (ev.key === 'Enter') toggle(); });
  return tr;
}

function updateVertexRow(tr, v, vw, isSource) {
  const w = tr._w;
  const c = tr.children;
  setAttr(tr, 'data-vertex-id', v.id);
  setText(c[0].firstChild, v.name || v.id);
  w.badge.update(v.status);
  setText(c[2], v.parallelism ?? DASH);
  setText(c[3], fmtInt(vw.recIn));
  setText(c[4], fmtInt(vw.recOut));
  setText(c[5], fmtRate(vw.rateIn));
  setText(c[6], fmtRate(vw.rateOut));
  setText(c[7], vw.hasLoad ? fmtPerMille(vw.busy) : DASH);
  setText(c[8], vw.hasLoad ? fmtPerMille(vw.backpressured) : DASH);
  setText(w.level, vw.hasLoad ? vw.level : DASH);
  setAttr(w.level, 'class', vw.hasLoad ? `bp-pill bp-${vw.level}` : 'bp-pill bp-none');
  setAttr(w.level, 'data-bp-level', vw.level);
  setText(c[10], (isSource ? 'out ' : '') + watermarkText(vw.wm));
  setAttr(c[10], 'title', vw.wm.kind === 'time' ? fmtWatermarkLong(vw.wm.ms, false) : null);
  setText(c[11], fmtInt(vw.late ?? 0));
  setAttr(c[11], 'data-late-dropped', vw.late ?? 0);
  c[11].classList.toggle('warn-text', (vw.late || 0) > 0);
  /* live keyed state (the subtasks' metrics stateEntries / stateSizeBytes, summed) */
  setText(c[12], vw.stateEntries === null ? DASH : fmtInt(vw.stateEntries));
  setAttr(c[12], 'data-state-entries', vw.stateEntries);
  setText(c[13], vw.stateBytes === null ? DASH : fmtBytes(vw.stateBytes));
  setAttr(c[13], 'data-state-bytes', vw.stateBytes);
  setAttr(c[0], 'title', `${v.name || v.id}\nstarted ${fmtTime(v['start-time'])}, duration ${fmtDuration(v.duration)}`);
}

function createSubtaskRow() {
  const badge = stateBadge();
  const tr = h('tr', { class: 'subtask-row' },
    h('td', { class: 'num' }), h('td', { class: 'mono tm' }), h('td', null, badge.el),
    h('td', { class: 'num' }), h('td', { class: 'num' }), h('td', { class: 'num' }), h('td', { class: 'num' }),
    h('td', { class: 'num' }), h('td', { class: 'num' }), h('td', { class: 'num' }),
    h('td', { class: 'wm' }), h('td', { class: 'wm' }), h('td', { class: 'num' }));
  tr._w = { badge };
  return tr;
}

function updateSubtaskRow(tr, st) {
  const m = st.metrics || {};
  const c = tr.children;
  const idle = m.watermarkIdle === true || m.watermarkIdle === 'true';
  setAttr(tr, 'data-subtask', st.subtask);
  setAttr(tr, 'data-watermark-idle', idle ? 'true' : 'false');
  setText(c[0], st.subtask ?? DASH);
  const tm = st['taskmanager-id'] || st.host || DASH;
  setText(c[1], tm);
  setAttr(c[1], 'title', st.host ? `host ${st.host}` : null);
  tr._w.badge.update(st.status);
  setText(c[3], fmtInt(m.numRecordsIn));
  setText(c[4], fmtInt(m.numRecordsOut));
  setText(c[5], fmtRate(m.numRecordsInPerSecond));
  setText(c[6], fmtRate(m.numRecordsOutPerSecond));
  setText(c[7], fmtPerMille(m.busyTimeMsPerSecond));
  setText(c[8], fmtPerMille(m.backPressuredTimeMsPerSecond));
  setText(c[9], fmtPerMille(m.idleTimeMsPerSecond));
  setText(c[10], fmtWatermark(m.currentInputWatermark, idle));
  setAttr(c[10], 'title', fmtWatermarkLong(m.currentInputWatermark, idle));
  setText(c[11], fmtWatermark(m.currentOutputWatermark, false));
  setAttr(c[11], 'title', fmtWatermarkLong(m.currentOutputWatermark, false));
  setText(c[12], fmtInt(m.numLateRecordsDropped ?? 0));
  c[12].classList.toggle('warn-text', (num(m.numLateRecordsDropped) || 0) > 0);
  setAttr(tr, 'class', `subtask-row state-row-${stateKey(st.status)}`);
}
