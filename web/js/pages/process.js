/*
 * pages/process.js -- a daemon's process, as Flink's JobManager and
 * TaskManager pages show it: #/jobmanager[/<tab>] and
 * #/taskmanagers/<id>/<tab> (Flink's #/job-manager/<tab> and
 * #/task-manager/<id>/<tab> too). Tabs: the log file, the stdout file and a
 * thread dump and metrics for both; the configuration and the environment
 * for the JobManager. Reads GET
 * jobmanager/{log,stdout,thread-dump,metrics,config,environment} and
 * taskmanagers/<id>/{log,stdout,thread-dump,metrics}.
 *
 * The log and stdout are fetched when their tab opens and on "Reload" (they
 * may be megabytes: not every refresh); the thread dump and the others on
 * every refresh while their tab shows.
 *
 * Metrics: as Flink's UI, pick metrics from the ids the daemon lists
 * (GET .../metrics); each chosen one shows its value and a line of its values
 * read while the tab showed (the last HISTORY readings). The choice is kept
 * per kind of daemon in localStorage (sluice.metrics.<kind>).
 */

import { h, setText, setAttr, show, syncKeyed } from '../dom.js';
import { api, seg } from '../api.js';
import { panel, errorBox, kvGrid } from '../widgets.js';
import { lineChart } from '../chart.js';
import { num, fmtBytes, fmtInt, DASH } from '../format.js';

const TABS = {
  jobmanager: [['log', 'Log'], ['stdout', 'Stdout'], ['thread-dump', 'Thread dump'], ['metrics', 'Metrics'],
    ['config', 'Configuration'], ['environment', 'Environment']],
  taskmanager: [['log', 'Log'], ['stdout', 'Stdout'], ['thread-dump', 'Thread dump'], ['metrics', 'Metrics']],
};
const HISTORY = 60; /* readings kept per metric (2 minutes at the 2 s refresh) */
const DEFAULT_METRICS = ['Status.JVM.CPU.Load', 'Status.ProcessTree.Memory.RSS'];

/* A metric's value as text, by what its name says it measures. */
export function fmtMetric(id, v) {
  const n = num(v);
  if (n === null) return DASH;
  if (/Memory|Bytes/.test(id)) return fmtBytes(n);
  if (/CPU\.Load$/.test(id)) return `${(n * 100).toFixed(1)} %`;
  if (/CPU\.Time$/.test(id)) return `${(n / 1e9).toFixed(1)} s`;
  return Number.isInteger(n) ? fmtInt(n) : n.toFixed(3);
}

function loadChoice(kind) {
  try {
    const v = JSON.parse(localStorage.getItem(`sluice.metrics.${kind}`));
    if (Array.isArray(v) && v.every((x) => typeof x === 'string')) return v;
  } catch (e) {
    /* storage disabled or damaged: the defaults */
  }
  return DEFAULT_METRICS.slice();
}

function saveChoice(kind, list) {
  try {
    localStorage.setItem(`sluice.metrics.${kind}`, JSON.stringify(list));
  } catch (e) {
    /* storage disabled: the choice lives until reload */
  }
}

export function create(ctx, firstRoute) {
  const jm = firstRoute.page === 'jobmanager';
  const tabs = TABS[jm ? 'jobmanager' : 'taskmanager'];
  const base = jm ? 'jobmanager' : `taskmanagers/${seg(firstRoute.tm)}`;
  const hashBase = jm ? '#/jobmanager' : `#/taskmanagers/${encodeURIComponent(firstRoute.tm)}`;
  let route = firstRoute;
  let stale = true; /* the text tabs: fetch again */

  const title = h('h1', { class: 'page-title' }, jm ? 'JobManager' : `TaskManager ${firstRoute.tm}`);
  const nav = h('nav', { class: 'tabs', role: 'tablist' },
    ...tabs.map(([key, label]) => h('a', { href: `${hashBase}/${key}`, role: 'tab', dataset: { tab: key } }, label)));
  const reload = h('button', { type: 'button', class: 'btn small ghost', id: 'process-reload' }, 'Reload');
  const text = h('pre', { class: 'process-text mono', id: 'process-text' });
  const threads = h('div', { id: 'thread-dump' });
  const conf = h('table', { class: 'table', id: 'process-config' },
    h('thead', null, h('tr', null, h('th', null, 'Key'), h('th', null, 'Value'))), h('tbody'));
  const env = kvGrid({ id: 'process-environment' });
  const kind = jm ? 'jobmanager' : 'taskmanager';
  let chosen = loadChoice(kind);
  const history = new Map(); /* metric id -> [values] */
  const picker = h('select', { id: 'metric-picker', 'aria-label': 'Metric to add' });
  const addBtn = h('button', { type: 'button', class: 'btn small', id: 'metric-add' }, 'Add metric');
  const cards = h('div', { class: 'metric-cards', id: 'metric-cards' });
  const metricsBox = h('div', { id: 'process-metrics' },
    h('div', { class: 'metric-picker' }, picker, addBtn), cards);
  const err = errorBox();
  const p = panel('');
  p.extra.append(reload);
  p.body.append(err.el, metricsBox, text, threads, conf, env.el);
  const el = h('div', { id: 'process', class: 'page', dataset: { process: jm ? 'jobmanager' : 'taskmanager' } },
    title, nav, p.el);
  let page = null;
  reload.addEventListener('click', () => {
    stale = true;
    page.refresh();
  });
  addBtn.addEventListener('click', () => {
    if (!picker.value || chosen.includes(picker.value)) return;
    chosen = chosen.concat([picker.value]);
    saveChoice(kind, chosen);
    page.refresh();
  });
  cards.addEventListener('click', (ev) => {
    const btn = ev.target.closest('.metric-remove');
    if (!btn) return;
    const id = btn.closest('.metric-card').dataset.metric;
    chosen = chosen.filter((m) => m !== id);
    history.delete(id);
    saveChoice(kind, chosen);
    page.refresh();
  });

  function tabOf(r) {
    return tabs.some(([k]) => k === r.tab) ? r.tab : 'log';
  }

  async function refreshMetrics() {
    const ids = ((await api.get(`${base}/metrics`)) || []).map((m) => m.id).sort();
    const offer = ids.filter((m) => !chosen.includes(m));
    syncKeyed(picker, offer, (m) => m, () => h('option'), (o, m) => {
      setAttr(o, 'value', m);
      setText(o, m);
    });
    addBtn.disabled = offer.length === 0;
    const want = chosen.filter((m) => ids.includes(m));
    const got = want.length ? await api.get(`${base}/metrics?get=${want.map(encodeURIComponent).join(',')}`) : [];
    const values = new Map((got || []).map((m) => [m.id, num(m.value)]));
    for (const id of want) {
      const list = history.get(id) || [];
      list.push(values.has(id) ? values.get(id) : null);
      if (list.length > HISTORY) list.shift();
      history.set(id, list);
    }
    syncKeyed(cards, want, (m) => m, (id) => {
      const chart = lineChart(id, (v) => fmtMetric(id, v), { class: 'line-chart metric-chart' });
      const card = h('div', { class: 'metric-card', dataset: { metric: id } },
        h('header', null, h('span', { class: 'metric-name mono' }, id),
          h('button', { type: 'button', class: 'btn small ghost metric-remove', 'aria-label': `Remove ${id}` }, 'Remove')),
        h('div', { class: 'metric-value' }), chart.el);
      card.chart = chart;
      return card;
    }, (card, id) => {
      const v = values.get(id);
      const val = card.querySelector('.metric-value');
      setText(val, fmtMetric(id, v));
      setAttr(val, 'data-value', v === null || v === undefined ? '' : String(v));
      card.chart.update(history.get(id));
    });
    setAttr(cards, 'data-count', want.length);
  }

  page = {
    el,
    route(r) {
      if (tabOf(r) !== tabOf(route)) stale = true;
      route = r;
      page.refresh();
    },
    async refresh() {
      const tab = tabOf(route);
      setAttr(el, 'data-tab', tab);
      for (const a of nav.children) {
        a.classList.toggle('active', a.dataset.tab === tab);
        setAttr(a, 'aria-selected', a.dataset.tab === tab ? 'true' : 'false');
      }
      setText(p.title, tabs.find(([k]) => k === tab)[1]);
      const isText = tab === 'log' || tab === 'stdout';
      show(text, isText);
      show(reload, isText);
      show(threads, tab === 'thread-dump');
      show(metricsBox, tab === 'metrics');
      show(conf, tab === 'config');
      show(env.el, tab === 'environment');
      try {
        if (isText) {
          if (!stale) return;
          const body = await api.text(`${base}/${tab}`);
          stale = false;
          setText(text, body);
          setAttr(text, 'data-bytes', body.length);
        } else if (tab === 'metrics') {
          await refreshMetrics();
        } else if (tab === 'thread-dump') {
          const dump = await api.get(`${base}/thread-dump`);
          const list = (dump && Array.isArray(dump.threadInfos)) ? dump.threadInfos : [];
          setAttr(threads, 'data-count', list.length);
          syncKeyed(threads, list, (t) => t.stringifiedThreadInfo.split('\n')[0],
            () => h('pre', { class: 'thread mono' }),
            (pre, t) => {
              setAttr(pre, 'data-thread-name', t.threadName);
              setText(pre, t.stringifiedThreadInfo.trimEnd());
            });
        } else if (tab === 'config') {
          const rows = await api.get(`${base}/config`);
          syncKeyed(conf.tBodies[0], rows || [], (r) => r.key,
            () => h('tr', { class: 'config-row' }, h('td', { class: 'mono' }), h('td', { class: 'mono' })),
            (tr, r) => {
              setAttr(tr, 'data-key', r.key);
              setText(tr.cells[0], r.key);
              setText(tr.cells[1], r.value);
            });
        } else {
          const e = await api.get(`${base}/environment`);
          env.update([['Version', e.jvm.version, 'version'], ['Machine', e.jvm.arch, 'arch'],
            ['Command line', e.jvm.options.join(' '), 'options'],
            ['Shared objects', e.classpath.join('\n'), 'classpath']]);
        }
        err.set(null);
      } catch (e) {
        err.fromError(e);
      }
    },
  };
  return page;
}
