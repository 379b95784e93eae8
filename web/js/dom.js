/*
 * dom.js -- the dashboard's small DOM toolkit.
 *
 * Every element is built with document.createElement and every piece of text
 * from the REST API goes in through textContent or setAttribute, never through
 * innerHTML, so nothing the server (or a job name) says can become markup.
 * Pages build their skeleton once and then patch it on each refresh:
 * setText/setAttr only touch the DOM when the value really changed, and
 * syncKeyed reconciles a list of children by key (creating, updating,
 * reordering and removing rows in place), which is what keeps the two-second
 * refresh free of flicker and keeps open <details>, focus and selection alive.
 */

const SVG_NS = 'http://www.w3.org/2000/svg';

/* Appends children (nodes, strings, numbers, arrays; null/false skipped). */
function append(parent, children) {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    if (Array.isArray(c)) append(parent, c);
    else if (c instanceof Node) parent.appendChild(c);
    else parent.appendChild(document.createTextNode(String(c)));
  }
}

/* Applies props: class, dataset (object), on<Event> (function), text,
 * known DOM properties (value, checked, ...) and otherwise attributes. */
function applyProps(el, props, isSvg) {
  if (!props) return;
  for (const [k, v] of Object.entries(props)) {
    if (v === undefined || v === null || v === false) continue;
    if (k === 'class') el.setAttribute('class', v);
    else if (k === 'dataset') for (const [dk, dv] of Object.entries(v)) el.dataset[dk] = String(dv);
    else if (k === 'text') el.textContent = String(v);
    else if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2).toLowerCase(), v);
    else if (!isSvg && (k === 'value' || k === 'checked' || k === 'disabled' || k === 'hidden' || k === 'open')) el[k] = v;
    else el.setAttribute(k, v === true ? '' : String(v));
  }
}

/* h('div', {class: 'x'}, 'text', child, ...) -> HTMLElement */
export function h(tag, props, ...children) {
  const el = document.createElement(tag);
  applyProps(el, props, false);
  append(el, children);
  return el;
}

/* s('rect', {x: 1}, ...) -> SVGElement */
export function s(tag, props, ...children) {
  const el = document.createElementNS(SVG_NS, tag);
  applyProps(el, props, true);
  append(el, children);
  return el;
}

/* Sets textContent when it differs; returns the element. */
export function setText(el, text) {
  const t = text === null || text === undefined ? '' : String(text);
  if (el.textContent !== t) el.textContent = t;
  return el;
}

/* Sets (or with null removes) an attribute when it differs. */
export function setAttr(el, name, value) {
  if (value === null || value === undefined || value === false) {
    if (el.hasAttribute(name)) el.removeAttribute(name);
  } else {
    const v = value === true ? '' : String(value);
    if (el.getAttribute(name) !== v) el.setAttribute(name, v);
  }
  return el;
}

/* Toggles a class only when needed. */
export function setClass(el, cls, on) {
  if (el.classList.contains(cls) !== !!on) el.classList.toggle(cls, !!on);
  return el;
}

/* Shows or hides an element through the hidden property. */
export function show(el, visible) {
  if (el.hidden === !!visible) el.hidden = !visible;
  return el;
}

/* Replaces all children with the given ones (for small, static parts). */
export function replaceChildren(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

/*
 * Reconciles parent's children with items, keyed by keyOf(item).
 * create(item) builds a new element; update(el, item) patches it (also called
 * right after create). Elements whose key disappeared are removed; order
 * follows items. The key is stored in el.dataset.key. Children of parent that
 * carry no data-key (e.g. an "empty" placeholder) are left alone.
 */
export function syncKeyed(parent, items, keyOf, create, update) {
  const existing = new Map();
  for (const child of Array.from(parent.children)) {
    if (child.dataset && child.dataset.key !== undefined) existing.set(child.dataset.key, child);
  }
  let cursor = null; /* last placed keyed element */
  const seen = new Set();
  for (const item of items) {
    const key = String(keyOf(item));
    if (seen.has(key)) continue; /* duplicate keys from the server: first wins */
    seen.add(key);
    let el = existing.get(key);
    if (!el) {
      el = create(item);
      el.dataset.key = key;
    }
    update(el, item);
    const want = cursor ? cursor.nextElementSibling : firstKeyed(parent);
    if (want !== el) {
      if (cursor) cursor.after(el);
      else parent.insertBefore(el, firstKeyed(parent));
    }
    cursor = el;
    existing.delete(key);
  }
  for (const el of existing.values()) el.remove();
}

function firstKeyed(parent) {
  for (const child of parent.children) if (child.dataset && child.dataset.key !== undefined) return child;
  return null;
}
