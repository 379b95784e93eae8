/*
 * flamegraph.js -- the selected vertex's flame graph (the vertex view's
 * "Flame Graph" tab, as Flink's UI has it).
 *
 * Reads GET jobs/<jid>/vertices/<vid>/flamegraph?type=full|on_cpu|off_cpu:
 * Flink's {endTimestamp, data: {name, value, children}}; endTimestamp -3 is
 * "sampling, ask again", -1 "nothing runs", -2 "disabled"; a picker narrows it
 * to one subtask (&subtaskindex=i). Draws the tree as
 * a flame graph of plain elements: the root at the bottom, each frame as
 * wide as its share of the samples, its callees above it; frames narrower
 * than a pixel's worth are left out. A frame's title gives its name, samples
 * and share; clicking one zooms to it, clicking the root zooms out.
 *
 * Two places use it: the vertex's Flame Graph tab (select: all subtasks or
 * the picker's one) and the subtask drawer (selectOne: that subtask alone,
 * no picker). Each instance names its elements after its id.
 */

import { h, setText, setAttr, show } from './dom.js';
import { api, seg, optional } from './api.js';

const ROW = 18;          /* px per stack level */
const TYPES = [['full', 'Full'], ['on_cpu', 'On-CPU'], ['off_cpu', 'Off-CPU']];

/* A stable colour per function name: warm hues, as flame graphs are drawn. */
function colour(name) {
  let x = 0;
  for (let i = 0; i < name.length; i++) x = (x * 31 + name.charCodeAt(i)) >>> 0;
  return `hsl(${(x % 50) + 5}, ${70 + (x % 20)}%, ${55 + ((x >> 8) % 15)}%)`;
}

function depthOf(n) {
  let d = 0;
  for (const c of n.children || []) d = Math.max(d, depthOf(c));
  return d + 1;
}

export function createFlameGraph(jid, id = 'flamegraph') {
  let vid = null;
  let type = 'full';
  let zoom = null;       /* the frame zoomed to (a node of the last tree), or null */
  let last = null;

  const buttons = TYPES.map(([key, label]) => h('button', {
    class: 'btn small', type: 'button', dataset: { flameType: key },
    onClick: () => { type = key; zoom = null; paintButtons(); load(); },
  }, label));
  /* all subtasks, or one (Flink's subtaskindex) */
  let subtask = '';
  const picker = h('select', { id: `${id}-subtask`, title: 'subtask',
    onChange: () => { subtask = picker.value; zoom = null; last = null; load(); } });
  function fillPicker(parallelism) {
    const opts = [h('option', { value: '' }, 'All subtasks')];
    for (let i = 0; i < parallelism; i++) opts.push(h('option', { value: String(i) }, `Subtask ${i}`));
    picker.replaceChildren(...opts);
    picker.value = subtask;
  }
  const status = h('p', { class: 'hint', id: `${id}-status` });
  const meta = h('p', { class: 'hint', id: `${id}-meta` });
  const canvas = h('div', { class: 'flamegraph', id: `${id}-canvas` });
  const el = h('div', { id, class: 'flamegraph-view', hidden: true },
    h('div', { class: 'flamegraph-types' }, buttons, picker), status, meta, canvas);

  function paintButtons() {
    for (const b of buttons) {
      b.classList.toggle('active', b.dataset.flameType === type);
      setAttr(b, 'aria-pressed', b.dataset.flameType === type ? 'true' : 'false');
    }
    setAttr(el, 'data-type', type);
  }
  paintButtons();

  function draw(root) {
    canvas.replaceChildren();
    const top = zoom || root;
    const total = top.value || 0;
    const depth = depthOf(top);
    canvas.style.height = `${depth * ROW}px`;
    if (!total) return;
    const width = canvas.clientWidth || 800;
    const place = (n, left, level) => {
      const w = (n.value / total) * 100;
      if ((w / 100) * width < 1) return;
      const share = ((n.value / (root.value || 1)) * 100).toFixed(1);
      const f = h('div', {
        class: 'frame', title: `${n.name}\n${n.value} samples (${share}%)`,
        dataset: { name: n.name, value: n.value },
      }, h('span', null, n.name));
      f.style.left = `${left}%`;
      f.style.width = `${w}%`;
      f.style.bottom = `${level * ROW}px`;
      f.style.background = n === root ? '#c9c9c9' : colour(n.name);
      f.addEventListener('click', () => { zoom = n === top ? null : n; draw(root); });
      canvas.append(f);
      let at = left;
      for (const c of n.children || []) {
        place(c, at, level + 1);
        at += (c.value / total) * 100;
      }
    };
    place(top, 0, 0);
  }

  async function load() {
    if (!vid) return;
    const want = vid;
    const one = subtask === '' ? '' : `&subtaskindex=${subtask}`;
    const g = await optional(api.get(`jobs/${seg(jid)}/vertices/${seg(vid)}/flamegraph?type=${type}${one}`));
    if (want !== vid || one !== (subtask === '' ? '' : `&subtaskindex=${subtask}`)) return;
    const ts = g ? g.endTimestamp : null;
    setAttr(el, 'data-end-timestamp', ts);
    if (!g) {
      setText(status, 'The flame graph could not be loaded.');
    } else if (ts === -3) {
      setText(status, 'Sampling the task threads\u2019 stacks\u2026');
    } else if (ts === -2) {
      setText(status, 'Flame graphs are disabled (rest.flamegraph.enabled: false).');
    } else if (ts === -1 || !g.data) {
      setText(status, 'No subtask of this vertex is running: nothing to sample.');
    } else {
      setText(status, '');
    }
    const ok = !!(g && g.data && ts > 0);
    show(status, !ok);
    show(meta, ok);
    if (ok) {
      last = g.data;
      setText(meta, `${g.data.value} samples, taken up to ${new Date(ts).toLocaleTimeString()}`);
      zoom = null; /* a new tree: its nodes are new objects */
      draw(last);
    } else {
      canvas.replaceChildren();
    }
  }

  return {
    el,
    /* Show the graph of vertex v (null: none) of `parallelism` subtasks; loads at once. */
    select(v, parallelism) {
      if (v !== vid) subtask = '';
      if (picker.options.length !== (parallelism || 0) + 1) fillPicker(parallelism || 0);
      if (v === vid) return;
      vid = v;
      picker.value = '';
      zoom = null;
      last = null;
      canvas.replaceChildren();
      setText(status, '');
      if (vid) load().catch(() => {});
    },
    /* Show the graph of subtask i of vertex v alone (v null: none), without
     * the picker; loads at once when it changes. */
    selectOne(v, i) {
      show(picker, false);
      const want = v ? String(i) : '';
      if (v === vid && want === subtask) return;
      vid = v;
      subtask = want;
      setAttr(el, 'data-subtask', v ? want : null);
      zoom = null;
      last = null;
      canvas.replaceChildren();
      setText(status, '');
      if (vid) load().catch(() => {});
    },
    /* Called on the page's refresh while shown: sampling may have ended. */
    refresh() {
      if (!vid) return Promise.resolve();
      if (last && el.dataset.endTimestamp > 0) return Promise.resolve(); /* keep the zoom */
      return load();
    },
    reload: () => load(),
  };
}
