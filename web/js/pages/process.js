/*
 * pages/process.js -- a daemon's process, as Flink's JobManager and
 * TaskManager pages show it: #/jobmanager[/<tab>] and
 * #/taskmanagers/<id>/<tab> (Flink's #/job-manager/<tab> and
 * #/task-manager/<id>/<tab> too). Tabs: the log file, the stdout file and a
 * thread dump for both; the configuration and the environment for the
 * JobManager. Reads GET jobmanager/{log,stdout,thread-dump,config,environment}
 * and taskmanagers/<id>/{log,stdout,thread-dump}.
 *
 * The log and stdout are fetched when their tab opens and on "Reload" (they
 * may be megabytes: not every refresh); the thread dump and the others on
 * every refresh while their tab shows.
 */

import { h, setText, setAttr, show, syncKeyed } from '../dom.js';
import { api, seg } from '../api.js';
import { panel, errorBox, kvGrid } from '../widgets.js';

const TABS = {
  jobmanager: [['log', 'Log'], ['stdout', 'Stdout'], ['thread-dump', 'Thread dump'],
    ['config', 'Configuration'], ['environment', 'Environment']],
  taskmanager: [['log', 'Log'], ['stdout', 'Stdout'], ['thread-dump', 'Thread dump']],
};

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
  const err = errorBox();
  const p = panel('');
  p.extra.append(reload);
  p.body.append(err.el, text, threads, conf, env.el);
  const el = h('div', { id: 'process', class: 'page', dataset: { process: jm ? 'jobmanager' : 'taskmanager' } },
    title, nav, p.el);
  let page = null;
  reload.addEventListener('click', () => {
    stale = true;
    page.refresh();
  });

  function tabOf(r) {
    return tabs.some(([k]) => k === r.tab) ? r.tab : 'log';
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
      show(conf, tab === 'config');
      show(env.el, tab === 'environment');
      try {
        if (isText) {
          if (!stale) return;
          const body = await api.text(`${base}/${tab}`);
          stale = false;
          setText(text, body);
          setAttr(text, 'data-bytes', body.length);
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
