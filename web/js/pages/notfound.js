/*
 * pages/notfound.js -- shown for a hash route the dashboard does not know.
 */

import { h } from '../dom.js';

export function create(ctx, route) {
  const el = h('div', { id: 'notfound', class: 'page' },
    h('h1', { class: 'page-title' }, 'Page not found'),
    h('p', null, 'There is no dashboard page at "', route.path || '', '". '),
    h('p', null, h('a', { href: '#/overview' }, 'Go to the overview')));
  return { el, async refresh() {} };
}
