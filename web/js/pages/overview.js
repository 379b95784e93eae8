/*
 * pages/overview.js -- the cluster at a glance (#/overview).
 *
 * Reads GET overview and GET jobs/overview. Shows the number of TaskManagers,
 * slots total and available (with a usage bar), jobs by state, then -- in an
 * amber box that only appears when needed -- every job that is waiting for
 * slots with the JobManager's own explanation ("waiting for 4 slots, 3
 * free"), and the table of jobs that are not finished yet.
 */

import { h, setText, setAttr, syncKeyed, show } from '../dom.js';
import { api } from '../api.js';
import { fmtInt, fmtTime } from '../format.js';
import { panel, jobTable, stateBadge, isTerminal } from '../widgets.js';

const STATS = [
  ['taskmanagers', 'TaskManagers'],
  ['slots-total', 'Slots total'],
  ['slots-available', 'Slots available'],
  ['jobs-running', 'Jobs running'],
  ['jobs-scheduled', 'Jobs scheduled'],
  ['jobs-finished', 'Jobs finished'],
  ['jobs-cancelled', 'Jobs cancelled'],
  ['jobs-failed', 'Jobs failed'],
];

const RUNNING = new Set(['RUNNING', 'RESTARTING', 'CANCELLING', 'FAILING']);
const SCHEDULED = new Set(['CREATED', 'INITIALIZING']);

export function create(ctx) {
  const values = {};
  const statEls = STATS.map(([key, label]) => {
    const v = h('div', { class: 'stat-value', dataset: { metric: key } }, '\u2014');
    values[key] = v;
    return h('div', { class: `stat stat-${key}` }, v, h('div', { class: 'stat-label' }, label));
  });
  const slotFill = h('div', { class: 'bar-fill' });
  const slotText = h('div', { class: 'bar-text' });
  const slotBar = h('div', { class: 'slot-usage', title: 'slots in use' },
    h('div', { class: 'bar' }, slotFill), slotText);

  const waitingList = h('ul', { class: 'waiting-list' });
  const waiting = h('section', { id: 'waiting-jobs', class: 'callout warn', hidden: true },
    h('h2', null, 'Jobs waiting for resources'), waitingList);

  const running = panel('Running and scheduled jobs');
  const table = jobTable(ctx.navigate, 'No running jobs.');
  running.body.append(table.el);

  const el = h('div', { id: 'overview', class: 'page' },
    h('h1', { class: 'page-title' }, 'Overview'),
    h('div', { class: 'stats' }, statEls),
    slotBar,
    waiting,
    running.el);

  return {
    el,
    async refresh() {
      /* Sluice's job list: Flink's, with each job's state-reason */
      const [ov, jobs] = await Promise.all([api.get('overview'), api.get('sluice/jobs/overview')]);
      const all = jobs && Array.isArray(jobs.jobs) ? jobs.jobs : [];
      /* Flink's jobs-running counts every job not yet ended; the page splits
       * the running from those waiting to be scheduled */
      const counted = {
        'jobs-running': all.filter((j) => RUNNING.has(j.state)).length,
        'jobs-scheduled': all.filter((j) => SCHEDULED.has(j.state)).length,
      };
      for (const [key] of STATS) {
        const raw = key in counted ? counted[key] : (ov ? ov[key] : undefined);
        setText(values[key], fmtInt(raw));
        setAttr(values[key], 'data-value', raw === undefined || raw === null ? null : String(raw));
      }
      const total = Number(ov && ov['slots-total']) || 0;
      const free = Number(ov && ov['slots-available']) || 0;
      const used = Math.max(0, total - free);
      slotFill.style.width = total > 0 ? `${(100 * used) / total}%` : '0%';
      setText(slotText, total > 0 ? `${used} of ${total} slots in use` : 'no slots registered');

      const list = all.slice();
      list.sort((a, b) => (Number(b['start-time']) || 0) - (Number(a['start-time']) || 0));
      const active = list.filter((j) => !isTerminal(j.state));
      const waitingJobs = active.filter((j) => j['state-reason']);
      show(waiting, waitingJobs.length > 0);
      syncKeyed(waitingList, waitingJobs, (j) => j.jid, (j) => createWaiting(j), updateWaiting);
      table.update(active);
    },
  };
}

function createWaiting() {
  const badge = stateBadge('data-job-state');
  const link = h('a', { class: 'job-name' });
  const reason = h('div', { class: 'state-reason big' });
  const since = h('span', { class: 'muted' });
  const li = h('li', { class: 'waiting-job' },
    h('div', { class: 'waiting-head' }, badge.el, ' ', link, ' ', since), reason);
  li._w = { badge, link, reason, since };
  return li;
}

function updateWaiting(li, job) {
  const w = li._w;
  setAttr(li, 'data-jid', job.jid);
  w.badge.update(job.state);
  setText(w.link, job.name || job.jid);
  setAttr(w.link, 'href', `#/jobs/${encodeURIComponent(job.jid)}`);
  setText(w.reason, job['state-reason']);
  setText(w.since, `submitted ${fmtTime(job['start-time'])}`);
}
