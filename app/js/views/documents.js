// Documents: the upload drop zone and the live, paged list (newest first).
// Only the visible page is fetched, so the list stays fast with any number of documents.

import { api, ApiError, getOrShow, getParsers, query } from '../api.js';
import { DOCUMENT_STATUSES as STATUSES } from '../contract.js';
import { badge, count, h, replace, rowLink, scroller, tickTimes, toast, when } from '../dom.js';

export const PAGE_SIZE = 50;
const SOURCES = { upload: 'Upload', api: 'API', email: 'Email', webhook: 'Inbound webhook' };

const href = (page, status) => {
  const q = new URLSearchParams();
  if (page > 1) q.set('page', String(page));
  if (status) q.set('status', status);
  const s = q.toString();
  return `#/documents${s ? `?${s}` : ''}`;
};

let lastList = '#/documents';
/** The list page (and filter) the user last looked at, for the way back from a document. */
export const listHref = () => lastList;

export function mount(root, route) {
  let page = Math.max(1, Number(route.query.get('page')) || 1);
  let status = STATUSES.includes(route.query.get('status')) ? route.query.get('status') : '';
  let total = null;
  let lastKey = '';

  const heading = h('h1', { tabindex: '-1' }, 'Documents');
  const totalText = h('span', { class: 'muted heading-count', 'aria-live': 'polite' });
  const upload = uploadPanel(() => {
    // New uploads are the newest documents: show the first page, where they appear.
    if (page !== 1) location.hash = href(1, status);
    else void refresh();
  });

  const filter = h(
    'select',
    { id: 'status-filter', onchange: () => (location.hash = href(1, filter.value)) },
    h('option', { value: '' }, 'All statuses'),
    STATUSES.map((s) => h('option', { value: s }, s[0].toUpperCase() + s.slice(1))),
  );
  filter.value = status;

  const tbody = h('tbody');
  const table = h(
    'table',
    { class: 'data docs' },
    h('caption', { class: 'visually-hidden' }, 'Documents, newest first. Enter opens a document.'),
    h(
      'thead',
      {},
      h(
        'tr',
        {},
        h('th', { scope: 'col' }, 'Status'),
        h('th', { scope: 'col' }, 'File'),
        h('th', { scope: 'col', class: 'col-source' }, 'Source'),
        h('th', { scope: 'col', class: 'num' }, 'Pages'),
        h('th', { scope: 'col', class: 'col-time' }, 'Received'),
      ),
    ),
    tbody,
  );
  const empty = h('p', { class: 'empty-state', hidden: true });
  const pagerTop = h('nav', { class: 'pager', 'aria-label': 'Pages (top)' });
  const pagerBottom = h('nav', { class: 'pager', 'aria-label': 'Pages' });
  const problem = h('p', { class: 'problem', role: 'alert', hidden: true });

  root.append(
    h('div', { class: 'view-head' }, heading, totalText),
    upload,
    h('div', { class: 'toolbar' }, h('label', { for: 'status-filter' }, 'Show '), filter, pagerTop),
    problem,
    scroller(table, 'Documents'),
    empty,
    pagerBottom,
  );

  function renderPager(nav) {
    const pages = Math.max(1, Math.ceil((total ?? 0) / PAGE_SIZE));
    const from = total ? (page - 1) * PAGE_SIZE + 1 : 0;
    const to = Math.min(total ?? 0, page * PAGE_SIZE);
    const link = (label, target, text, disabled) =>
      disabled
        ? h('span', { class: 'pager-link', 'aria-disabled': 'true' }, text)
        : h('a', { class: 'pager-link', href: href(target, status), 'aria-label': label }, text);
    replace(
      nav,
      h('span', { class: 'pager-range' }, total ? `${count(from)}–${count(to)} of ${count(total)}` : '0 of 0'),
      link('First page', 1, '«', page <= 1),
      link('Previous page', page - 1, '‹ Prev', page <= 1),
      h('span', { class: 'pager-page' }, `Page ${count(page)} of ${count(pages)}`),
      link('Next page', page + 1, 'Next ›', page >= pages),
      link('Last page', pages, '»', page >= pages),
    );
  }

  function renderRows(docs) {
    // Keep the keyboard where it was across a live update.
    const focusedId = document.activeElement?.closest?.('tr[data-id]')?.dataset.id;
    replace(
      tbody,
      docs.map((d) =>
        rowLink(
          h(
            'tr',
            { dataset: { id: d.document_id, status: d.status } },
            h('td', {}, badge(d.status)),
            h(
              'td',
              { class: 'file' },
              h('span', { class: 'file-name', title: d.file_name }, d.file_name),
              d.error ? h('span', { class: 'row-error', title: d.error }, d.error) : null,
              // Source and time under the name, for a narrow window that hides their columns.
              h(
                'span',
                { class: 'file-meta muted', 'aria-hidden': 'true' },
                `${SOURCES[d.source_type] ?? d.source_type} · `,
                when(d.created_at),
              ),
            ),
            h('td', { class: 'col-source' }, SOURCES[d.source_type] ?? d.source_type),
            h('td', { class: 'num' }, d.page_count ?? '—'),
            h('td', { class: 'col-time' }, when(d.created_at)),
          ),
          `${d.file_name}, ${d.status}`,
          () => (location.hash = `#/documents/${encodeURIComponent(d.document_id)}`),
        ),
      ),
    );
    if (focusedId) tbody.querySelector(`tr[data-id="${CSS.escape(focusedId)}"]`)?.focus();
  }

  async function refresh() {
    lastList = href(page, status);
    const body = await getOrShow(
      `/documents${query({ offset: (page - 1) * PAGE_SIZE, limit: PAGE_SIZE, status })}`,
      problem,
    );
    if (body === undefined) return;
    const pages = Math.max(1, Math.ceil(body.total / PAGE_SIZE));
    if (page > pages) {
      // The filter or a smaller total left us past the end: go to the last page.
      location.hash = href(pages, status);
      return;
    }
    const key = JSON.stringify([
      body.total,
      body.documents.map((d) => [d.document_id, d.status, d.page_count, d.error]),
    ]);
    tickTimes(tbody);
    if (key === lastKey) return;
    lastKey = key;
    total = body.total;
    totalText.textContent = status ? `${count(total)} ${status}` : `${count(total)} in all`;
    renderRows(body.documents);
    renderPager(pagerTop);
    renderPager(pagerBottom);
    empty.hidden = body.documents.length > 0;
    empty.textContent = status
      ? `No ${status} documents.`
      : 'No documents yet. Drop a PDF above, or send one to the API.';
  }

  return {
    refresh,
    update(next) {
      if (next.view !== 'documents') return false;
      page = Math.max(1, Number(next.query.get('page')) || 1);
      status = STATUSES.includes(next.query.get('status')) ? next.query.get('status') : '';
      filter.value = status;
      lastKey = '';
      void refresh();
      return true;
    },
  };
}

/** The application's upload: drop or choose files; they arrive as documents with source_type "upload". */
function uploadPanel(onUploaded) {
  const input = h('input', {
    type: 'file',
    id: 'upload-input',
    multiple: true,
    class: 'visually-hidden',
    tabindex: '-1',
    accept: '.pdf,.png,.jpg,.jpeg,.tif,.tiff,.txt,application/pdf,image/*,text/plain',
  });
  const parserSelect = h('select', { id: 'upload-parser' });
  const parserField = h(
    'span',
    { class: 'upload-parser', hidden: true },
    h('label', { for: 'upload-parser' }, 'Parser '),
    parserSelect,
  );
  const status = h('p', { class: 'upload-status', role: 'status', 'aria-live': 'polite' });
  const zone = h(
    'div',
    { class: 'dropzone', id: 'dropzone' },
    h('span', { class: 'dropzone-icon', 'aria-hidden': 'true' }, '⇪'),
    h('span', { class: 'dropzone-text' }, 'Drop files here, or '),
    h(
      'label',
      {
        for: 'upload-input',
        class: 'button',
        tabindex: '0',
        role: 'button',
        onkeydown: (e) => {
          if (e.key !== 'Enter' && e.key !== ' ') return;
          e.preventDefault();
          input.click();
        },
      },
      'Choose files',
    ),
    input,
    parserField,
  );

  getParsers()
    .then((parsers) => {
      replace(
        parserSelect,
        parsers.map((p) => h('option', { value: p.parser_id }, `${p.parser_name} (${p.parser_id})`)),
      );
      parserField.hidden = parsers.length < 2;
    })
    .catch((err) => (status.textContent = err.message));

  async function send(files) {
    if (!files.length) return;
    const parserId = parserSelect.value;
    if (!parserId) {
      status.textContent = 'No parser to upload to: the configuration has none.';
      return;
    }
    const form = new FormData();
    for (const f of files) form.append('file', f, f.name);
    status.textContent = `Uploading ${files.length === 1 ? files[0].name : `${files.length} files`}…`;
    zone.classList.add('busy');
    try {
      const body = await api('POST', `/parsers/${encodeURIComponent(parserId)}/documents`, form);
      const n = body.documents.length;
      status.textContent = `Uploaded ${n === 1 ? files[0].name : `${n} files`}: ${n === 1 ? 'it is' : 'they are'} processing below.`;
      onUploaded();
    } catch (err) {
      status.textContent = `Upload failed: ${err instanceof ApiError ? err.message : String(err)}`;
      toast(status.textContent, 'error');
    } finally {
      zone.classList.remove('busy');
      input.value = '';
    }
  }

  input.addEventListener('change', () => void send([...input.files]));
  zone.addEventListener('dragover', (e) => {
    e.preventDefault();
    zone.classList.add('over');
  });
  zone.addEventListener('dragleave', () => zone.classList.remove('over'));
  zone.addEventListener('drop', (e) => {
    e.preventDefault();
    zone.classList.remove('over');
    void send([...(e.dataTransfer?.files ?? [])]);
  });

  return h('section', { class: 'upload', 'aria-label': 'Upload' }, zone, status);
}
