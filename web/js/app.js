/*
 * app.js -- the dashboard's entry point: hash router, refresh loop, shell.
 *
 * The route lives in location.hash (#/overview, #/jobs, #/jobs/<jid>[/<tab>
 * [/<vertex>]], #/taskmanagers, #/submit), so every view can be bookmarked
 * and reloaded; #/jobmanager/<tab> and #/taskmanagers/<id>/<tab> show a
 * daemon's log, stdout and threads; Flink's UI's routes (#/job/running/<jid>/overview,
 * #/job-manager/<tab>, #/task-manager/<id>/<tab>) open the same pages. Each page module exports create(ctx, route) returning
 * {el, key, route(r), refresh(), destroy()}. When the hash changes but the
 * page key stays (another tab or vertex of the same job) the page is told the
 * new route instead of being rebuilt, so nothing flashes.
 *
 * One refresh loop runs at a time: it awaits the current page's refresh(),
 * then sleeps ~2 s. A newer loop (after navigation) invalidates older ones by
 * generation number. A failed refresh keeps the last data on screen and shows
 * the error in a banner above it. Refreshing pauses while the tab is hidden.
 */

import { api, setToken, getToken } from './api.js';
import { setText, setAttr, show } from './dom.js';
import { fmtClock } from './format.js';
import * as overviewPage from './pages/overview.js';
import * as jobsPage from './pages/jobs.js';
import * as jobPage from './pages/job.js';
import * as taskmanagersPage from './pages/taskmanagers.js';
import * as processPage from './pages/process.js';
import * as submitPage from './pages/submit.js';
import * as notFoundPage from './pages/notfound.js';

const REFRESH_MS = 2000;

const content = document.getElementById('content');
const pageError = document.getElementById('page-error');
const refreshStatus = document.getElementById('refresh-status');

const ctx = {
  config: {}, /* GET config, loaded once */
  navigate(hash) {
    if (location.hash !== hash) location.hash = hash;
  },
  /* Replaces the hash without a history entry (tab and vertex selection). */
  replaceRoute(hash) {
    if (location.hash !== hash) {
      history.replaceState(null, '', hash);
      onRoute();
    }
  },
};

/* '#/jobs/abc/checkpoints' -> {page:'job', jid:'abc', tab:'checkpoints', vertex:null} */
export function parseRoute(hash) {
  const path = String(hash || '').replace(/^#\/?/, '').split('?')[0];
  const parts = path.split('/').filter((p) => p !== '').map((p) => {
    try {
      return decodeURIComponent(p);
    } catch (e) {
      return p;
    }
  });
  if (parts.length === 0 || parts[0] === 'overview') return { page: 'overview' };
  if (parts[0] === 'jobs' && parts.length === 1) return { page: 'jobs' };
  if (parts[0] === 'jobs') {
    const tab = ['graph', 'checkpoints', 'exceptions', 'rescales'].includes(parts[2]) ? parts[2] : 'graph';
    return { page: 'job', jid: parts[1], tab, vertex: tab === 'graph' && parts[3] ? parts[3] : null };
  }
  const PROCESS_TABS = { log: 'log', logs: 'log', stdout: 'stdout', 'thread-dump': 'thread-dump',
    config: 'config', configuration: 'config', environment: 'environment', metrics: 'metrics' };
  if (parts[0] === 'jobmanager' || parts[0] === 'job-manager') {
    return { page: 'jobmanager', tab: PROCESS_TABS[parts[1]] || 'log' };
  }
  if ((parts[0] === 'taskmanagers' || parts[0] === 'task-manager') && parts[1] &&
      ['log', 'stdout', 'thread-dump', 'metrics'].includes(PROCESS_TABS[parts[2]])) {
    return { page: 'taskmanager', tm: parts[1], tab: PROCESS_TABS[parts[2]] };
  }
  if (parts[0] === 'taskmanagers') return { page: 'taskmanagers', tm: parts[1] || null };
  /* Flink's own routes, so links and bookmarks made for Flink's UI open the same pages:
   * #/job/running, #/job/completed, #/job/running/<jid>/<tab>, #/job/completed/<jid>/<tab>,
   * #/job/<jid>/<tab> (older Flink), #/task-manager[/<id>[/<tab>]] */
  if (parts[0] === 'job') {
    const rest = parts[1] === 'running' || parts[1] === 'completed' ? parts.slice(2) : parts.slice(1);
    if (rest.length === 0) return { page: 'jobs' };
    const flinkTabs = { overview: 'graph', exceptions: 'exceptions', checkpoints: 'checkpoints', rescales: 'rescales' };
    return { page: 'job', jid: rest[0], tab: flinkTabs[rest[1]] || 'graph', vertex: null };
  }
  if (parts[0] === 'task-manager') return { page: 'taskmanagers', tm: parts[1] || null };
  if (parts[0] === 'submit') return { page: 'submit' };
  return { page: 'notfound', path };
}

const PAGES = {
  overview: overviewPage,
  jobs: jobsPage,
  job: jobPage,
  taskmanagers: taskmanagersPage,
  jobmanager: processPage,
  taskmanager: processPage,
  submit: submitPage,
  notfound: notFoundPage,
};

let current = null; /* the mounted page object */
let generation = 0; /* bumps on every new loop; older loops stop */
let timer = null;

function pageKey(route) {
  if (route.page === 'job') return `job:${route.jid}`;
  if (route.page === 'taskmanager') return `taskmanager:${route.tm}`;
  return route.page;
}

function onRoute() {
  const route = parseRoute(location.hash);
  const key = pageKey(route);
  for (const a of document.querySelectorAll('#nav a')) {
    const nav = a.dataset.nav;
    const active = nav === route.page || (nav === 'jobs' && route.page === 'job') ||
      (nav === 'taskmanagers' && route.page === 'taskmanager');
    a.classList.toggle('active', active);
    if (active) a.setAttribute('aria-current', 'page');
    else a.removeAttribute('aria-current');
  }
  if (current && current.key === key) {
    if (current.route) current.route(route);
    return;
  }
  if (current && current.destroy) current.destroy();
  const mod = PAGES[route.page] || notFoundPage;
  current = mod.create(ctx, route);
  current.key = key;
  content.replaceChildren(current.el);
  document.body.dataset.page = route.page;
  showError(null);
  startLoop();
}

function showError(messages) {
  if (!messages || messages.length === 0) {
    show(pageError, false);
    return;
  }
  setText(pageError, messages.join('\n'));
  show(pageError, true);
}

function startLoop() {
  clearTimeout(timer);
  const gen = ++generation;
  const tick = async () => {
    if (gen !== generation) return;
    if (document.hidden) {
      timer = setTimeout(tick, REFRESH_MS);
      return;
    }
    const page = current;
    try {
      if (page && page.refresh) await page.refresh();
      if (gen !== generation) return;
      showError(null);
      setAttr(refreshStatus, 'data-state', 'ok');
      setText(refreshStatus, `updated ${fmtClock(Date.now()).slice(0, 8)}`);
    } catch (e) {
      if (gen !== generation) return;
      const msgs = e && e.messages ? e.messages : [String(e && e.message ? e.message : e)];
      showError(msgs);
      setAttr(refreshStatus, 'data-state', e && e.status === 0 ? 'offline' : 'error');
      setText(refreshStatus, e && e.status === 0 ? 'connection lost' : 'refresh failed');
      if (!(e && e.messages)) console.error(e); /* a bug of ours, not a server answer */
    }
    if (gen === generation) timer = setTimeout(tick, REFRESH_MS);
  };
  tick();
}

/* ---- access token box ---- */

function initToken() {
  const box = document.getElementById('token-box');
  const form = document.getElementById('token-form');
  const input = document.getElementById('token-input');
  const state = document.getElementById('token-state');
  const paint = () => {
    const set = getToken() !== '';
    setText(state, set ? 'set' : 'not set');
    setAttr(state, 'data-token-set', set ? 'true' : 'false');
  };
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    setToken(input.value.trim());
    input.value = '';
    paint();
    box.open = false;
  });
  document.getElementById('token-clear').addEventListener('click', () => {
    setToken('');
    input.value = '';
    paint();
  });
  window.addEventListener('sluice:auth-required', () => {
    box.open = true;
    input.focus();
  });
  paint();
}

/* High availability (GET /sluice/ha): which JobManager
 * leads, and this one's role; a standby links to the leader. */
function paintHA(ha) {
  const el = document.getElementById('ha-role');
  if (!ha || !ha.enabled) {
    el.hidden = true;
    return;
  }
  el.hidden = false;
  setAttr(el, 'data-role', ha.role);
  const leader = ha['leader-rest-url'] || '';
  let text = `HA: ${ha.role.toLowerCase()}`;
  if (ha.role === 'SUSPENDED') text += ' (ZooKeeper connection lost: scheduling and checkpoints paused)';
  else if (ha.role !== 'LEADER') text += leader ? ` \u2014 leader at ${leader}` : ' \u2014 no leader yet';
  setText(el, text);
}

async function refreshHA() {
  try {
    paintHA(await api.get('sluice/ha'));
  } catch (e) {
    /* the next round tries again */
  }
}

async function loadConfig() {
  try {
    ctx.config = (await api.get('config')) || {};
  } catch (e) {
    ctx.config = {};
  }
  const version = ctx.config['flink-version'] || '';
  setText(document.getElementById('version'), version ? `version ${version}` : '');
  refreshHA();
  /* features.web-submit: the submit page also uploads C jobs (jars);
   * Sluice's own submission of JSON job graphs (POST /jobs) is always there */
  if (current && current.configChanged) current.configChanged();
}

initToken();
window.addEventListener('hashchange', onRoute);
document.addEventListener('visibilitychange', () => {
  if (!document.hidden && current) startLoop();
});
if (!location.hash) history.replaceState(null, '', '#/overview');
loadConfig();
setInterval(refreshHA, 3000);
onRoute();
