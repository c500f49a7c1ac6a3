// Credits: the balance, a top-up form, and the ledger (reserves, refunds, top-ups), newest first.

import { getOrShow, post } from '../api.js';
import { count, h, replace, scroller, tickTimes, toast, when } from '../dom.js';

const PAGE_SIZE = 50;
const KINDS = { reserve: 'Reserve', refund: 'Refund', topup: 'Top-up' };

export function mount(root) {
  let shown = PAGE_SIZE;
  let lastKey = '';
  let entries = [];

  const balance = h('strong', { class: 'balance-value', id: 'balance' }, '…');
  const totals = h('p', { class: 'muted' });
  const pages = h('input', {
    type: 'number',
    id: 'topup-pages',
    min: '1',
    step: '1',
    value: '100',
    required: true,
    inputmode: 'numeric',
  });
  const form = h(
    'form',
    { class: 'inline-form', onsubmit: topUp },
    h('label', { for: 'topup-pages' }, 'Add pages'),
    pages,
    h('button', { type: 'submit', class: 'button primary' }, 'Top up'),
  );
  const tbody = h('tbody');
  const more = h(
    'button',
    {
      type: 'button',
      class: 'button',
      hidden: true,
      onclick: () => {
        shown += PAGE_SIZE;
        renderRows();
      },
    },
    'Show older entries',
  );
  const problem = h('p', { class: 'problem', role: 'alert', hidden: true });

  root.append(
    h('div', { class: 'view-head' }, h('h1', { tabindex: '-1' }, 'Credits')),
    h(
      'div',
      { class: 'card balance' },
      h('div', {}, h('span', { class: 'muted' }, 'Balance'), h('div', {}, balance, ' pages'), totals),
      form,
    ),
    problem,
    h('h2', {}, 'Ledger'),
    h(
      'p',
      { class: 'muted' },
      'One credit per page: reserved when a document is accepted, refunded if its extraction fails.',
    ),
    scroller(
      h(
        'table',
        { class: 'data ledger' },
        h(
          'thead',
          {},
          h(
            'tr',
            {},
            h('th', { scope: 'col' }, 'When'),
            h('th', { scope: 'col' }, 'Kind'),
            h('th', { scope: 'col', class: 'num' }, 'Pages'),
            h('th', { scope: 'col' }, 'Document'),
            h('th', { scope: 'col', class: 'col-sha' }, 'SHA-256'),
          ),
        ),
        tbody,
      ),
      'Ledger',
    ),
    more,
  );

  function renderRows() {
    const rows = entries.slice(0, shown);
    replace(
      tbody,
      rows.map((e) =>
        h(
          'tr',
          { dataset: { kind: e.kind } },
          h('td', {}, when(e.at)),
          h('td', {}, h('span', { class: `kind kind-${e.kind}` }, KINDS[e.kind] ?? e.kind)),
          h(
            'td',
            { class: `num ${e.kind === 'reserve' ? 'debit' : 'credit'}` },
            `${e.kind === 'reserve' ? '−' : '+'}${count(e.pages)}`,
          ),
          h(
            'td',
            { class: 'file' },
            e.document_id
              ? h('a', { href: `#/documents/${encodeURIComponent(e.document_id)}` }, e.file_name ?? e.document_id)
              : h('span', { class: 'muted' }, '—'),
          ),
          h('td', { class: 'col-sha' }, e.sha256 ? h('code', { title: e.sha256 }, e.sha256.slice(0, 12)) : ''),
        ),
      ),
    );
    if (!rows.length) tbody.append(h('tr', {}, h('td', { colspan: '5', class: 'muted' }, 'No entries yet.')));
    more.hidden = entries.length <= shown;
  }

  async function refresh() {
    const body = await getOrShow('/ledger', problem);
    if (body === undefined) return;
    tickTimes(tbody);
    const key = `${body.balance}/${body.entries.length}`;
    if (key === lastKey) return;
    lastKey = key;
    balance.textContent = count(body.balance);
    entries = [...body.entries].reverse();
    const sum = (kind) => body.entries.filter((e) => e.kind === kind).reduce((n, e) => n + e.pages, 0);
    totals.textContent = `${count(sum('reserve'))} reserved · ${count(sum('refund'))} refunded · ${count(sum('topup'))} topped up`;
    renderRows();
  }

  async function topUp(e) {
    e.preventDefault();
    const n = Number(pages.value);
    if (!Number.isInteger(n) || n < 1) return void toast('Enter a whole number of pages, 1 or more.', 'error');
    try {
      const body = await post('/credits', { pages: n });
      toast(`Added ${count(n)} pages: the balance is ${count(body.balance)}.`);
      await refresh();
    } catch (err) {
      toast(err.message, 'error');
    }
  }

  return { refresh };
}
