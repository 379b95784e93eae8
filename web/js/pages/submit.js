/*
 * pages/submit.js -- submit a job graph (#/submit).
 *
 * The user pastes a JSON job graph or loads a .json file into the editor,
 * optionally sets the parallelism, a savepoint to restore from and
 * allowNonRestoredState, and submits. The JSON is checked in the browser
 * first (a syntax error names its position); then POST jobs?parallelism=..
 * &savepointPath=..&allowNonRestoredState=true with the graph as the body.
 * The answer {"jobid"} becomes a link to the job page; {"errors":[..]} is
 * listed as the server wrote it.
 */

import { h, setText, setAttr, show, replaceChildren } from '../dom.js';
import { api, withQuery } from '../api.js';
import { errorBox } from '../widgets.js';

const EXAMPLE = `{
  "name": "example",
  "parallelism": 2,
  "vertices": [
    {"id": "src", "type": "datagen", "config": {"rows-per-second": 1000}},
    {"id": "sink", "type": "print"}
  ],
  "edges": [{"from": "src", "to": "sink", "strategy": "rebalance"}]
}`;

/* "Unexpected token } in JSON at position 42" -> adds line:column. */
function jsonError(text, e) {
  const m = /position (\d+)/.exec(e.message);
  if (!m || /line \d+/.test(e.message)) return `The job file is not valid JSON: ${e.message}`;
  const pos = Number(m[1]);
  const before = text.slice(0, pos);
  const line = before.split('\n').length;
  const col = pos - before.lastIndexOf('\n');
  return `The job file is not valid JSON (line ${line}, column ${col}): ${e.message}`;
}

export function create(ctx) {
  const editor = h('textarea', { id: 'submit-json', spellcheck: 'false', rows: '18',
    placeholder: EXAMPLE, 'aria-label': 'Job graph JSON' });
  const file = h('input', { id: 'submit-file', type: 'file', accept: '.json,application/json' });
  const fileName = h('span', { class: 'muted' });
  const parallelism = h('input', { id: 'submit-parallelism', type: 'number', min: '1', max: '32768', placeholder: 'job default' });
  const savepoint = h('input', { id: 'submit-savepoint', type: 'text', placeholder: 'file:/path/to/savepoint-…', size: '48' });
  const allowNonRestored = h('input', { id: 'submit-allow-non-restored', type: 'checkbox' });
  const button = h('button', { id: 'submit-button', class: 'btn primary', type: 'submit' }, 'Submit job');
  const errors = errorBox();
  const result = h('div', { id: 'submit-result', class: 'callout ok', hidden: true });

  file.addEventListener('change', () => {
    const f = file.files && file.files[0];
    if (!f) return;
    const reader = new FileReader();
    reader.onload = () => {
      editor.value = String(reader.result || '');
      setText(fileName, `${f.name} (${f.size} bytes)`);
      errors.set([]);
    };
    reader.onerror = () => errors.set([`Cannot read ${f.name}: ${reader.error ? reader.error.message : 'unknown error'}`]);
    reader.readAsText(f);
  });

  const form = h('form', { id: 'submit-form', class: 'panel form', autocomplete: 'off' },
    h('div', { class: 'panel-body' },
      h('label', { class: 'field' }, h('span', null, 'Job graph (JSON)'), editor),
      h('div', { class: 'field-row' }, h('label', { class: 'file' }, 'Load from file\u2026 ', file), fileName),
      h('div', { class: 'field-row' },
        h('label', { class: 'field inline' }, h('span', null, 'Parallelism'), parallelism),
        h('label', { class: 'field inline grow' }, h('span', null, 'Restore from savepoint'), savepoint),
        h('label', { class: 'check' }, allowNonRestored, ' allow non-restored state')),
      h('p', { class: 'hint' }, 'Allowing non-restored state drops savepoint state that no operator of this job claims; leave it off unless you removed operators on purpose.'),
      h('div', { class: 'field-row' }, button),
      errors.el, result));

  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    errors.set([]);
    show(result, false);
    const text = editor.value.trim();
    if (!text) {
      errors.set(['Paste a job graph or load a .json file first.']);
      return;
    }
    try {
      JSON.parse(text);
    } catch (e) {
      errors.set([jsonError(text, e)]);
      return;
    }
    const p = parallelism.value.trim();
    if (p && !(Number.isInteger(Number(p)) && Number(p) >= 1)) {
      errors.set([`Parallelism must be a whole number of at least 1, not "${p}".`]);
      return;
    }
    button.disabled = true;
    setText(button, 'Submitting\u2026');
    try {
      const path = withQuery('jobs', {
        parallelism: p,
        savepointPath: savepoint.value.trim(),
        allowNonRestoredState: allowNonRestored.checked ? 'true' : '',
      });
      const resp = await api.post(path, text);
      const jid = resp && (resp.jobid || resp.jobId || resp.jid);
      if (!jid) throw new Error('The server accepted the job but returned no job id.');
      setAttr(result, 'data-jid', jid);
      replaceChildren(result, 'Job has been submitted with JobID ',
        h('a', { href: `#/jobs/${encodeURIComponent(jid)}`, class: 'mono', id: 'submitted-job-link' }, String(jid)));
      show(result, true);
    } catch (e) {
      errors.fromError(e);
    } finally {
      button.disabled = false;
      setText(button, 'Submit job');
    }
  });


  const el = h('div', { id: 'submit', class: 'page' },
    h('h1', { class: 'page-title' }, 'Submit a job'), form);
  return { el, async refresh() {} };
}
