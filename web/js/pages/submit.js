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
 *
 * When /config says features.web-submit, a second form uploads a C job
 * (a shared object, docs/DATASTREAM.md) with POST jars/upload and runs it
 * with POST jars/<id>/run (its program arguments, entry point and the same
 * parallelism / savepoint fields), as Flink's submit page does with jars.
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


  const jar = jarForm(parallelism, savepoint, allowNonRestored);
  const el = h('div', { id: 'submit', class: 'page' },
    h('h1', { class: 'page-title' }, 'Submit a job'), form, jar.el);
  const showJar = () => show(jar.el, Boolean(ctx.config && ctx.config.features && ctx.config.features['web-submit']));
  showJar();
  return { el, async refresh() {}, configChanged: showJar };
}

/* The C job upload form (features.web-submit). */
function jarForm(parallelism, savepoint, allowNonRestored) {
  const file = h('input', { id: 'jar-file', type: 'file', accept: '.so' });
  const args = h('input', { id: 'jar-args', type: 'text', size: '48', placeholder: 'program arguments, space-separated' });
  const entry = h('input', { id: 'jar-entry', type: 'text', placeholder: 'sluice_job_main' });
  const button = h('button', { id: 'jar-button', class: 'btn primary', type: 'submit' }, 'Upload and run');
  const errors = errorBox();
  const result = h('div', { id: 'jar-result', class: 'callout ok', hidden: true });
  const form = h('form', { id: 'jar-form', class: 'panel form', autocomplete: 'off', hidden: true },
    h('div', { class: 'panel-body' },
      h('h2', null, 'Upload a C job'),
      h('div', { class: 'field-row' }, h('label', { class: 'file' }, 'Shared object (.so)\u2026 ', file)),
      h('div', { class: 'field-row' },
        h('label', { class: 'field inline grow' }, h('span', null, 'Program arguments'), args),
        h('label', { class: 'field inline' }, h('span', null, 'Entry point'), entry)),
      h('p', { class: 'hint' }, 'Parallelism and the savepoint to restore from are taken from the form above.'),
      h('div', { class: 'field-row' }, button),
      errors.el, result));
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    errors.set([]);
    show(result, false);
    const f = file.files && file.files[0];
    if (!f) {
      errors.set(['Choose a shared object (.so) first.']);
      return;
    }
    button.disabled = true;
    setText(button, 'Uploading\u2026');
    try {
      const body = new FormData();
      body.append('jarfile', f, f.name);
      const up = await api.upload('jars/upload', body);
      const id = up && up.filename ? up.filename.split('/').pop() : '';
      if (!id) throw new Error('The server stored the upload but returned no file name.');
      setText(button, 'Running\u2026');
      const run = {
        programArgsList: args.value.trim() ? args.value.trim().split(/\s+/) : [],
      };
      if (entry.value.trim()) run.entryClass = entry.value.trim();
      if (parallelism.value.trim()) run.parallelism = Number(parallelism.value.trim());
      if (savepoint.value.trim()) run.savepointPath = savepoint.value.trim();
      if (allowNonRestored.checked) run.allowNonRestoredState = true;
      const resp = await api.post(`jars/${encodeURIComponent(id)}/run`, run);
      const jid = resp && resp.jobid;
      if (!jid) throw new Error('The server ran the job but returned no job id.');
      setAttr(result, 'data-jid', jid);
      replaceChildren(result, 'Job has been submitted with JobID ',
        h('a', { href: `#/jobs/${encodeURIComponent(jid)}`, class: 'mono', id: 'jar-job-link' }, String(jid)));
      show(result, true);
    } catch (e) {
      errors.fromError(e);
    } finally {
      button.disabled = false;
      setText(button, 'Upload and run');
    }
  });
  return { el: form };
}
