/*
 * pages/job-checkpoints.js -- the job page's checkpoints tab.
 *
 * Reads GET jobs/<jid>/checkpoints (counts, latest completed / savepoint /
 * failed / restored, history newest first) and GET jobs/<jid>/checkpoints/
 * config. Shows the counts (#checkpoint-count carries the number of completed
 * checkpoints in data-count), the latest entries with their external paths,
 * two small bar charts (end-to-end duration and state size over the
 * history), the history table, and the configuration. A job with
 * exactly-once Kafka sinks also gets their open and pre-committed
 * transactions (GET sluice/jobs/<jid>/kafka-transactions; #kafka-transactions
 * carries their number in data-count), shown only when there are some.
 */

import { h, setText, setAttr, syncKeyed, show, replaceChildren } from '../dom.js';
import { api, seg, optional } from '../api.js';
import { num, fmtInt, fmtTime, fmtDuration, fmtBytes, stateKey, DASH } from '../format.js';
import { panel, kvGrid } from '../widgets.js';
import { barChart } from '../chart.js';

const COUNTS = [
  ['completed', 'Completed'],
  ['failed', 'Failed'],
  ['in_progress', 'In progress'],
  ['restored', 'Restored'],
  ['total', 'Triggered'],
];

export function createCheckpointsTab(jid) {
  const countEls = {};
  const counts = h('div', { class: 'stats small' }, COUNTS.map(([k, label]) => {
    const v = h('div', { class: 'stat-value', dataset: { cpCount: k } }, DASH);
    if (k === 'completed') v.id = 'checkpoint-count';
    countEls[k] = v;
    return h('div', { class: `stat cp-${k}` }, v, h('div', { class: 'stat-label' }, label));
  }));

  const latest = panel('Latest');
  const latestBody = h('div', { class: 'latest-grid' });
  latest.body.append(latestBody);
  const latestBlocks = {};
  for (const [key, label] of [['completed', 'Completed checkpoint'], ['savepoint', 'Savepoint'],
    ['failed', 'Failed checkpoint'], ['restored', 'Restored from']]) {
    const body = h('div', { class: 'latest-body' });
    latestBlocks[key] = body;
    latestBody.append(h('div', { class: 'latest-block', id: `latest-${key}` }, h('h3', null, label), body));
  }

  const durationChart = barChart('End-to-end duration', fmtDuration, { id: 'chart-duration' });
  const sizeChart = barChart('State size', fmtBytes, { id: 'chart-size' });
  const charts = panel('History');
  const hbody = h('tbody');
  const alignHead = [h('th', { class: 'num align' }, 'Aligned buffered'), h('th', { class: 'num align' }, 'Alignment')];
  const htable = h('table', { class: 'grid checkpoints-table', id: 'checkpoint-history' },
    h('thead', null, h('tr', null,
      h('th', { class: 'num' }, 'ID'), h('th', null, 'Status'), h('th', null, 'Type'),
      h('th', null, 'Triggered'), h('th', { class: 'num' }, 'End to end'), h('th', { class: 'num' }, 'State size'),
      h('th', { class: 'num', title: 'Bytes this checkpoint wrote anew (less than the state size when incremental)' }, 'Checkpointed'),
      alignHead, h('th', { class: 'num' }, 'Acknowledged'), h('th', null, 'Path / failure'))),
    hbody);
  const hEmpty = h('p', { class: 'empty' }, 'No checkpoints yet.');
  charts.body.append(h('div', { class: 'charts' }, durationChart.el, sizeChart.el),
    h('div', { class: 'table-wrap' }, htable), hEmpty);

  const configPanel = panel('Configuration');
  const config = kvGrid({ id: 'checkpoint-config' });
  configPanel.body.append(config.el);

  const txPanel = panel('Kafka transactions');
  const txBody = h('tbody');
  const txTable = h('table', { class: 'grid', id: 'kafka-transactions' },
    h('thead', null, h('tr', null,
      h('th', null, 'Vertex'), h('th', { class: 'num' }, 'Subtask'), h('th', null, 'Transactional id'),
      h('th', null, 'State'), h('th', { class: 'num' }, 'Checkpoint'), h('th', { class: 'num' }, 'Records'),
      h('th', { class: 'num' }, 'Age'))),
    txBody);
  txPanel.body.append(h('div', { class: 'table-wrap' }, txTable));
  show(txPanel.el, false);

  const el = h('div', { class: 'tab-checkpoints' }, counts,
    h('div', { class: 'split' }, latest.el, configPanel.el), txPanel.el, charts.el);

  return {
    el,
    async refresh() {
      const [cp, cfg, own, tx] = await Promise.all([
        api.get(`jobs/${seg(jid)}/checkpoints`),
        optional(api.get(`jobs/${seg(jid)}/checkpoints/config`)),
        /* the longest alignment per checkpoint, which Flink's statistics
         * keep only per subtask */
        optional(api.get(`sluice/jobs/${seg(jid)}/checkpoints`)),
        optional(api.get(`sluice/jobs/${seg(jid)}/kafka-transactions`)),
      ]);
      const txs = tx && Array.isArray(tx.transactions) ? tx.transactions : [];
      show(txPanel.el, txs.length > 0);
      setAttr(txTable, 'data-count', txs.length);
      syncKeyed(txBody, txs, (t) => `${t.vertex}|${t['transactional-id']}`, createTxRow, updateTxRow);
      const c = (cp && cp.counts) || {};
      for (const [k] of COUNTS) {
        setText(countEls[k], fmtInt(c[k] ?? 0));
        setAttr(countEls[k], 'data-count', num(c[k]) ?? 0);
      }
      const l = (cp && cp.latest) || {};
      paintLatest(latestBlocks.completed, l.completed, 'completed');
      paintLatest(latestBlocks.savepoint, l.savepoint, 'savepoint');
      paintLatest(latestBlocks.failed, l.failed, 'failed');
      paintLatest(latestBlocks.restored, l.restored, 'restored');

      const durations = new Map((own && Array.isArray(own.history) ? own.history : []).map((x) => [x.id, x]));
      const history = (cp && Array.isArray(cp.history) ? cp.history : []).map((x) => {
        const d = durations.get(x.id);
        return d ? Object.assign({}, x, { alignment_duration: d.alignment_duration }) : x;
      });
      const hasAlign = history.some((x) => x.alignment_buffered !== undefined || x.alignment_duration !== undefined);
      for (const th of alignHead) show(th, hasAlign);
      show(htable, history.length > 0);
      show(hEmpty, history.length === 0);
      syncKeyed(hbody, history, (x) => x.id, createHistoryRow, (tr, x) => updateHistoryRow(tr, x, hasAlign));
      const oldestFirst = history.slice().reverse();
      const failed = (x) => String(x.status).toUpperCase() === 'FAILED';
      durationChart.update(oldestFirst.map((x) => ({ id: x.id, value: num(x.end_to_end_duration), failed: failed(x) })));
      sizeChart.update(oldestFirst.map((x) => ({ id: x.id, value: num(x.state_size ?? x.checkpointed_size), failed: failed(x) })));

      config.update(configPairs(cfg));
    },
  };
}

function createTxRow() {
  const cells = [0, 1, 2, 3, 4, 5, 6].map((i) => h('td', { class: i === 1 || i >= 4 ? 'num' : null }));
  const tr = h('tr', { class: 'kafka-txn' }, cells);
  tr._c = cells;
  return tr;
}

function updateTxRow(tr, t) {
  const c = tr._c;
  setAttr(tr, 'data-txn', t['transactional-id']);
  setAttr(tr, 'data-txn-state', t.state);
  setText(c[0], t.vertex ?? DASH);
  setText(c[1], String(t.subtask ?? DASH));
  setText(c[2], t['transactional-id'] ?? DASH);
  setText(c[3], t.state ?? DASH);
  setText(c[4], t['checkpoint-id'] == null ? DASH : String(t['checkpoint-id']));
  setText(c[5], fmtInt(t.records ?? 0));
  setText(c[6], fmtDuration(num(t['age-ms'])));
}

function paintLatest(body, entry, kind) {
  const stamp = body.dataset.stamp || '';
  const next = entry ? JSON.stringify(entry) : '';
  if (stamp === next) return;
  body.dataset.stamp = next;
  if (!entry) {
    replaceChildren(body, h('span', { class: 'muted' }, 'none'));
    setAttr(body.parentNode, 'data-checkpoint-id', null);
    return;
  }
  setAttr(body.parentNode, 'data-checkpoint-id', entry.id);
  const rows = [['ID', entry.id]];
  if (kind === 'restored') {
    rows.push(['Restored at', fmtTime(entry.restore_timestamp)]);
    rows.push(['Savepoint', entry.is_savepoint ? 'yes' : 'no']);
  } else if (kind === 'failed') {
    rows.push(['Failed at', fmtTime(entry.failure_timestamp)]);
    rows.push(['Triggered', fmtTime(entry.trigger_timestamp)]);
  } else {
    rows.push(['Completed', fmtTime(entry.latest_ack_timestamp)]);
    rows.push(['End to end', fmtDuration(entry.end_to_end_duration)]);
    rows.push(['State size', fmtBytes(entry.state_size ?? entry.checkpointed_size)]);
    rows.push(['Checkpointed', fmtBytes(entry.checkpointed_size ?? entry.state_size)]);
  }
  const dl = h('dl', { class: 'kv compact' }, rows.map(([k, v]) => h('div', { class: 'kv-item' }, h('dt', null, k), h('dd', null, v ?? DASH))));
  const extra = [];
  if (entry.external_path) {
    extra.push(h('div', { class: 'path' }, h('span', { class: 'k' }, 'Path '),
      h('code', { class: 'external-path', dataset: { path: entry.external_path } }, entry.external_path)));
  }
  if (kind === 'failed' && entry.failure_message) {
    extra.push(h('pre', { class: 'failure-message' }, String(entry.failure_message)));
  }
  replaceChildren(body, dl, extra);
}

function createHistoryRow() {
  const status = h('span', { class: 'badge' });
  const tr = h('tr', { class: 'checkpoint-row' },
    h('td', { class: 'num' }), h('td', null, status), h('td'), h('td'),
    h('td', { class: 'num' }), h('td', { class: 'num' }), h('td', { class: 'num checkpointed-size' }),
    h('td', { class: 'num align' }), h('td', { class: 'num align' }),
    h('td', { class: 'num' }), h('td', { class: 'path-cell' }, h('span', { class: 'path-text' })));
  tr._status = status;
  return tr;
}

function updateHistoryRow(tr, x, hasAlign) {
  const c = tr.children;
  const status = String(x.status || 'UNKNOWN');
  setAttr(tr, 'data-checkpoint-id', x.id);
  setAttr(tr, 'data-status', status);
  setText(c[0], x.id);
  setText(tr._status, status);
  setAttr(tr._status, 'class', `badge state-${stateKey(status)}`);
  let type = x.checkpoint_type || (x.is_savepoint ? 'SAVEPOINT' : 'CHECKPOINT');
  setText(c[2], String(type));
  setText(c[3], fmtTime(x.trigger_timestamp));
  setText(c[4], fmtDuration(x.end_to_end_duration));
  setText(c[5], fmtBytes(x.state_size ?? x.checkpointed_size));
  setText(c[6], fmtBytes(x.checkpointed_size ?? x.state_size));
  show(c[7], hasAlign);
  show(c[8], hasAlign);
  setText(c[7], fmtBytes(x.alignment_buffered));
  setText(c[8], fmtDuration(x.alignment_duration));
  const acked = x.num_acknowledged_subtasks;
  setText(c[9], acked === undefined ? DASH : `${acked}/${x.num_subtasks ?? '?'}`);
  const text = x.failure_message ? String(x.failure_message) : x.external_path ? String(x.external_path) : '';
  setText(c[10].firstChild, text || DASH);
  setAttr(c[10].firstChild, 'title', text || null);
}

function configPairs(cfg) {
  if (!cfg || typeof cfg !== 'object') return [['Configuration', 'unavailable']];
  const yesNo = (b) => (b === undefined || b === null ? DASH : b ? 'yes' : 'no');
  const ext = cfg.externalization || {};
  const pairs = [
    ['Mode', cfg.mode ? String(cfg.mode).replace(/_/g, ' ') : DASH, 'mode'],
    ['Interval', fmtDuration(cfg.interval), 'interval'],
    ['Timeout', fmtDuration(cfg.timeout), 'timeout'],
    ['Minimum pause', fmtDuration(cfg.min_pause), 'min_pause'],
    ['Max concurrent', cfg.max_concurrent ?? DASH, 'max_concurrent'],
    ['Retained on cancel', ext.enabled === undefined ? DASH : ext.enabled ? (ext.delete_on_cancellation ? 'deleted on cancellation' : 'retained') : 'not externalized', 'externalization'],
    ['State backend', cfg.state_backend ?? DASH, 'state_backend'],
    ['Checkpoint storage', cfg.checkpoint_storage ?? DASH, 'checkpoint_storage'],
    ['Unaligned', yesNo(cfg.unaligned_checkpoints), 'unaligned_checkpoints'],
    ['Tolerable failures', cfg.tolerable_failed_checkpoints ?? DASH, 'tolerable_failed_checkpoints'],
  ];
  return pairs.map(([k, v, f]) => [k, String(v), f]);
}
