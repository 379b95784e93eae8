/*
 * pages/jobs.js -- the job list (#/jobs).
 *
 * Reads GET jobs/overview and splits it into running jobs (any state that
 * can still change, including waiting and restarting ones, whose
 * state-reason is shown under the name) and completed jobs (FINISHED,
 * CANCELED, FAILED, SUSPENDED), newest first. A row opens the job page.
 */

import { h } from '../dom.js';
import { api } from '../api.js';
import { panel, jobTable, isTerminal } from '../widgets.js';

export function create(ctx) {
  const running = panel('Running jobs', { id: 'running-jobs' });
  const completed = panel('Completed jobs', { id: 'completed-jobs' });
  const runningTable = jobTable(ctx.navigate, 'No running jobs.');
  const completedTable = jobTable(ctx.navigate, 'No completed jobs.');
  running.body.append(runningTable.el);
  completed.body.append(completedTable.el);
  const el = h('div', { id: 'jobs', class: 'page' },
    h('h1', { class: 'page-title' }, 'Jobs'), running.el, completed.el);
  return {
    el,
    async refresh() {
      const data = await api.get('sluice/jobs/overview'); /* Flink's list, with state-reason */
      const list = (data && Array.isArray(data.jobs) ? data.jobs : []).slice();
      list.sort((a, b) => (Number(b['start-time']) || 0) - (Number(a['start-time']) || 0));
      runningTable.update(list.filter((j) => !isTerminal(j.state)));
      completedTable.update(list.filter((j) => isTerminal(j.state)));
    },
  };
}
