// DOM helpers. Every piece of data reaches the page as a text node or an attribute value,
// never as markup: nothing here (or anywhere in the app) assigns innerHTML.

/**
 * Creates an element. `props`: `class`, `on<event>` listeners, `dataset`, booleans
 * (true sets an empty attribute, false/null/undefined omit it), anything else an attribute.
 * Children: nodes, strings and numbers (as text), arrays (flattened), null/false (skipped).
 */
export function h(tag, props = {}, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(props ?? {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith('on') && typeof value === 'function') el.addEventListener(key.slice(2).toLowerCase(), value);
    else if (key === 'dataset') Object.assign(el.dataset, value);
    else if (key === 'value' && 'value' in el) el.value = String(value);
    else el.setAttribute(key, value === true ? '' : String(value));
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    if (Array.isArray(child)) append(el, child);
    else el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

/** Replaces the children of `el`. */
export function replace(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

const numberFormat = new Intl.NumberFormat();
export const count = (n) => numberFormat.format(n);

/** "3 s ago", "5 min ago", "in 8 s", or a date: short enough for a narrow column. */
function ago(iso, now = Date.now()) {
  if (!iso) return '—';
  const ms = now - Date.parse(iso);
  const s = Math.round(Math.abs(ms) / 1000);
  let span;
  if (s < 2) return 'just now';
  if (s < 60) span = `${s} s`;
  else if (s < 3600) span = `${Math.floor(s / 60)} min`;
  else if (s < 86400) span = `${Math.floor(s / 3600)} h`;
  else return new Date(iso).toLocaleDateString();
  return ms < 0 ? `in ${span}` : `${span} ago`;
}

/** A <time> that shows a relative time and the full local time on hover. */
export function when(iso) {
  if (!iso) return h('span', { class: 'muted' }, '—');
  return h('time', { datetime: iso, title: new Date(iso).toLocaleString(), dataset: { ago: '' } }, ago(iso));
}

/** Refreshes the text of every relative <time> under `root` (cheap; no re-render). */
export function tickTimes(root) {
  for (const t of root.querySelectorAll('time[data-ago]')) t.textContent = ago(t.getAttribute('datetime'));
}

export const clock = (iso) => (iso ? new Date(iso).toLocaleTimeString() : '—');

/** A status word with a colour dot: processing, completed, error, pending, delivered, failed. */
export function badge(state, text = state) {
  return h('span', { class: `badge badge-${state}` }, h('span', { class: 'dot', 'aria-hidden': 'true' }), text);
}

/** Makes a table row act as a link: click, Enter and Space open it; it is one tab stop. */
export function rowLink(tr, label, open) {
  tr.tabIndex = 0;
  tr.classList.add('row-link');
  tr.setAttribute('aria-label', label);
  tr.addEventListener('click', (e) => {
    if (e.target instanceof Element && e.target.closest('a, button, input, select')) return;
    open();
  });
  tr.addEventListener('keydown', (e) => {
    if (e.target !== tr) return;
    if (e.key === 'Enter' || e.key === ' ') {
      e.preventDefault();
      open();
    } else if (e.key === 'ArrowDown' || e.key === 'ArrowUp') {
      e.preventDefault();
      const next = e.key === 'ArrowDown' ? tr.nextElementSibling : tr.previousElementSibling;
      if (next instanceof HTMLElement && next.tabIndex >= 0) next.focus();
    }
  });
  return tr;
}

/** A table inside a horizontally scrolling box, so a narrow window never clips it. */
export const scroller = (table, label) =>
  h('div', { class: 'table-scroll', role: 'region', 'aria-label': label, tabindex: '0' }, table);

/**
 * Gives each cell of `table`'s body its column's heading as data-label, so that a narrow window
 * can show the table as one small card per row (class "stack" in app.css), each value beside
 * its name, instead of columns cut off at the right. Call it after the rows are (re)drawn.
 */
export function labelCells(table) {
  // Explicit roles: a table whose parts are laid out as blocks stays a table to a screen reader.
  table.setAttribute('role', 'table');
  for (const group of table.querySelectorAll('thead, tbody')) group.setAttribute('role', 'rowgroup');
  for (const th of table.querySelectorAll('thead th')) th.setAttribute('role', 'columnheader');
  for (const tr of table.rows) tr.setAttribute('role', 'row');
  const headings = [...table.querySelectorAll('thead th')].map((th) =>
    th.querySelector('.visually-hidden') ? '' : th.textContent.trim(),
  );
  for (const tr of table.tBodies[0]?.rows ?? []) {
    for (const td of tr.cells) td.setAttribute('role', 'cell');
    if (tr.cells.length !== headings.length) continue; // a message across all columns
    for (const [i, td] of [...tr.cells].entries()) td.dataset.label = headings[i];
  }
  return table;
}

/** Short toast in the polite live region. */
export function toast(message, kind = 'info') {
  const box = document.getElementById('toasts');
  const el = h('div', { class: `toast toast-${kind}` }, message);
  box.append(el);
  setTimeout(() => el.remove(), kind === 'error' ? 8000 : 4000);
}

/** Copies text; the Clipboard API needs a secure context, which 127.0.0.1 and localhost are. */
export async function copyText(text) {
  if (navigator.clipboard?.writeText) {
    try {
      await navigator.clipboard.writeText(text);
      return true;
    } catch {
      /* fall back below (permission denied, or an insecure origin) */
    }
  }
  const area = h('textarea', { class: 'offscreen', readonly: true });
  area.value = text;
  document.body.append(area);
  area.select();
  const ok = document.execCommand('copy');
  area.remove();
  return ok;
}
