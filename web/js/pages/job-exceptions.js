/*
 * pages/job-exceptions.js -- the job page's exceptions tab.
 *
 * Reads GET jobs/<jid>/exceptions and lists exceptionHistory.entries newest
 * first: time, task, location, exception name, and the stack trace in a
 * collapsible <pre>. Entries are keyed by timestamp and name, so a trace the
 * user opened stays open across refreshes. Older servers' "root-exception"
 * is shown when there is no history.
 */

import { h, setText, setAttr, syncKeyed, show } from '../dom.js';
import { api, seg } from '../api.js';
import { fmtTime, DASH } from '../format.js';

export function createExceptionsTab(jid) {
  const list = h('div', { class: 'exception-list', id: 'exception-list' });
  const empty = h('p', { class: 'empty' }, 'No exceptions. \u2714');
  const truncated = h('p', { class: 'hint', hidden: true }, 'The history is truncated; older exceptions are not shown.');
  const el = h('div', { class: 'tab-exceptions' }, list, truncated, empty);
  return {
    el,
    async refresh() {
      const data = await api.get(`jobs/${seg(jid)}/exceptions`);
      const hist = (data && data.exceptionHistory) || {};
      let entries = Array.isArray(hist.entries) ? hist.entries.slice() : [];
      if (entries.length === 0 && data && data['root-exception']) {
        entries = [{ exceptionName: 'root exception', stacktrace: data['root-exception'], timestamp: data.timestamp }];
      }
      entries.sort((a, b) => (Number(b.timestamp) || 0) - (Number(a.timestamp) || 0));
      show(empty, entries.length === 0);
      show(truncated, !!hist.truncated);
      setAttr(list, 'data-count', entries.length);
      const firstPaint = list.children.length === 0;
      syncKeyed(list, entries, (e) => `${e.timestamp}|${e.exceptionName}|${e.taskName}|${e.taskManagerId}`,
        createEntry, updateEntry);
      /* the newest trace starts open; after that the user decides */
      if (firstPaint && list.firstElementChild) list.firstElementChild.open = true;
    },
  };
}

function createEntry() {
  const time = h('span', { class: 'ex-time' });
  const name = h('span', { class: 'ex-name' });
  const task = h('span', { class: 'ex-task' });
  const loc = h('span', { class: 'ex-location mono' });
  const pre = h('pre', { class: 'stacktrace' });
  const details = h('details', { class: 'exception' },
    h('summary', null, time, name, h('span', { class: 'ex-where' }, task, loc)), pre);
  details._w = { time, name, task, loc, pre };
  return details;
}

function updateEntry(details, e) {
  const w = details._w;
  setAttr(details, 'data-timestamp', e.timestamp);
  setText(w.time, fmtTime(e.timestamp));
  setText(w.name, e.exceptionName || 'exception');
  setText(w.task, e.taskName ? e.taskName : '');
  setText(w.loc, e.taskManagerId || e.endpoint ? `@ ${e.taskManagerId || e.endpoint}` : '');
  setText(w.pre, e.stacktrace || DASH);
}
