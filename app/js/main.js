// The application of `extract serve`: a hash router over six views and one poll loop.
// Each view is a module exporting mount(root, route) -> { refresh?, update?, dispose? }.

import { onReachability } from './api.js';
import { h, replace } from './dom.js';
import * as documents from './views/documents.js';
import * as document_ from './views/document.js';
import * as parsers from './views/parsers.js';
import * as credits from './views/credits.js';
import * as webhooks from './views/webhooks.js';
import * as faults from './views/faults.js';

const VIEWS = { documents, document: document_, parsers, credits, webhooks, faults };
const POLL_MS = 1000;

/** "#/documents/doc_1?page=2" -> { view: 'document', id: 'doc_1', query } */
export function parseRoute(hash) {
  const [path, search = ''] = hash.replace(/^#\/?/, '').split('?');
  const [first = 'documents', id] = path.split('/').filter(Boolean).map(decodeURIComponent);
  const view = first === 'documents' && id ? 'document' : first in VIEWS ? first : 'documents';
  return { view, id: id ?? null, query: new URLSearchParams(search) };
}

const root = document.getElementById('view');
let current = null; // { name, instance }
let inFlight = false;

function render(fromUser) {
  const route = parseRoute(location.hash);
  for (const a of document.querySelectorAll('#nav a')) {
    const active = a.dataset.view === (route.view === 'document' ? 'documents' : route.view);
    if (active) a.setAttribute('aria-current', 'page');
    else a.removeAttribute('aria-current');
  }
  // A view that can follow its own query (the documents page, filters) keeps its state and focus.
  if (current?.name === route.view && current.instance.update?.(route)) return;
  current?.instance.dispose?.();
  replace(root);
  const instance = VIEWS[route.view].mount(root, route) ?? {};
  current = { name: route.view, instance };
  document.title = `${root.querySelector('h1')?.textContent ?? 'extract'} · extract serve`;
  // After a click in the app, move focus to the new view's heading, as a page load would.
  if (fromUser) root.querySelector('h1')?.focus({ preventScroll: false });
  void poll();
}

/** Refreshes the visible view: never two refreshes at once, never while the tab is hidden. */
async function poll() {
  if (inFlight || document.hidden || !current?.instance.refresh) return;
  inFlight = true;
  try {
    await current.instance.refresh();
  } catch {
    /* the view shows its own errors; reachability is reported by api.js */
  } finally {
    inFlight = false;
  }
}

// The sticky header's height, for what sticks below it (a document's pages) and for scroll-padding.
const header = document.querySelector('header.top');
new ResizeObserver(() =>
  document.documentElement.style.setProperty('--header-height', `${header.offsetHeight}px`),
).observe(header);

const connection = document.getElementById('connection');
onReachability((ok) => {
  const text = ok ? '' : 'not reachable: is extract serve running?';
  if (connection.textContent !== text) replace(connection, text ? h('span', { class: 'offline' }, text) : null);
});

// A file dropped outside the drop zone must not navigate away from the app.
for (const type of ['dragover', 'drop']) window.addEventListener(type, (e) => e.preventDefault());
window.addEventListener('hashchange', () => render(true));
document.addEventListener('visibilitychange', () => void poll());
setInterval(() => void poll(), POLL_MS);
render(false);
