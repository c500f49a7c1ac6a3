// Webhooks: each integration with its settings and test action, and the delivery log
// (every attempt with its status and latency), with resend.

import { get, getOrShow, post, query } from '../api.js';
import { DELIVERY_STATES as OUTCOMES } from '../contract.js';
import { badge, clock, h, labelCells, replace, scroller, tickTimes, toast, when } from '../dom.js';

const LIMIT = 100;

function authText(auth) {
  if (auth.type === 'bearer') return `Bearer token ${auth.token}`;
  if (auth.type === 'basic') return `Basic, user ${auth.username}`;
  return 'None (open to anyone who knows the URL)';
}

function attemptsList(attempts) {
  if (!attempts.length) return h('span', { class: 'muted' }, 'not sent yet');
  return h(
    'ol',
    { class: 'attempts' },
    attempts.map((a) =>
      h(
        'li',
        {
          class: a.status !== null && a.status >= 200 && a.status < 300 ? 'ok' : 'bad',
          dataset: { attempt: String(a.attempt) },
        },
        h('span', { class: 'attempt-n' }, `#${a.attempt}`),
        ' ',
        h('strong', { class: 'attempt-status' }, a.status === null ? 'no answer' : String(a.status)),
        ' ',
        h('span', { class: 'muted' }, `${a.latency_ms} ms · ${clock(a.at)}`),
        a.error ? h('div', { class: 'attempt-error' }, a.error) : null,
        a.response_excerpt
          ? h('div', { class: 'excerpt', title: 'The first bytes of the answer' }, a.response_excerpt)
          : null,
      ),
    ),
  );
}

export function mount(root, route) {
  let integration = route.query.get('integration') ?? '';
  let outcome = OUTCOMES.includes(route.query.get('outcome')) ? route.query.get('outcome') : '';
  let documentId = route.query.get('document_id') ?? '';
  let lastKey = '';

  const cards = h('div', { class: 'cards' }, h('p', { class: 'muted' }, 'Loading…'));
  const integrationSelect = h(
    'select',
    { id: 'filter-integration', onchange: () => setFilter({ integration: integrationSelect.value }) },
    h('option', { value: '' }, 'All integrations'),
  );
  const outcomeSelect = h(
    'select',
    { id: 'filter-outcome', onchange: () => setFilter({ outcome: outcomeSelect.value }) },
    h('option', { value: '' }, 'Any state'),
    OUTCOMES.map((o) => h('option', { value: o }, o)),
  );
  outcomeSelect.value = outcome;
  const docChip = h('span', { class: 'chip-slot' });
  const tbody = h('tbody');
  const problem = h('p', { class: 'problem', role: 'alert', hidden: true });

  root.append(
    h('div', { class: 'view-head' }, h('h1', { tabindex: '-1' }, 'Webhooks')),
    h(
      'p',
      { class: 'lead' },
      'Each completed document is pushed as a document.processed event to every webhook integration of its parser; failed attempts are retried on a schedule.',
    ),
    cards,
    h('h2', {}, 'Delivery log'),
    h(
      'div',
      { class: 'toolbar' },
      h('label', { for: 'filter-integration', class: 'visually-hidden' }, 'Integration'),
      integrationSelect,
      h('label', { for: 'filter-outcome', class: 'visually-hidden' }, 'State'),
      outcomeSelect,
      docChip,
    ),
    problem,
    scroller(
      h(
        'table',
        { class: 'data deliveries stack' },
        h('caption', { class: 'visually-hidden' }, `Latest ${LIMIT} deliveries, newest first`),
        h(
          'thead',
          {},
          h(
            'tr',
            {},
            h('th', { scope: 'col' }, 'Created'),
            h('th', { scope: 'col' }, 'Event'),
            h('th', { scope: 'col' }, 'State'),
            h('th', { scope: 'col' }, 'Attempts'),
            h('th', { scope: 'col' }, h('span', { class: 'visually-hidden' }, 'Actions')),
          ),
        ),
        tbody,
      ),
      'Delivery log',
    ),
  );

  function setFilter(change) {
    const next = { integration, outcome, document_id: documentId, ...change };
    location.hash = `#/webhooks${query(next)}`;
  }

  function renderChip() {
    replace(
      docChip,
      documentId
        ? h(
            'span',
            { class: 'chip' },
            'Document ',
            h('code', {}, documentId),
            h(
              'button',
              {
                type: 'button',
                class: 'chip-x',
                'aria-label': 'Show every document',
                onclick: () => setFilter({ document_id: '' }),
              },
              '×',
            ),
          )
        : null,
    );
  }
  renderChip();

  get('/integrations')
    .then(({ integrations }) => {
      integrationSelect.append(...integrations.map((i) => h('option', { value: i.id }, i.id)));
      integrationSelect.value = integration;
      if (!integrations.length) {
        cards.replaceChildren(
          h(
            'p',
            { class: 'empty-state' },
            'No webhook integrations. Add one to a parser in the configuration: ',
            h('code', {}, '"webhooks": [{ "url": "https://…", "method": "POST" }]'),
            '.',
          ),
        );
        return;
      }
      cards.replaceChildren(
        ...integrations.map((i) =>
          h(
            'article',
            { class: 'card integration', dataset: { integration: i.id } },
            h('h2', {}, i.id, ' ', h('span', { class: 'muted' }, `· ${i.parser_id}`)),
            h(
              'dl',
              { class: 'facts' },
              h(
                'div',
                {},
                h('dt', {}, 'URL'),
                h('dd', {}, h('span', { class: 'method' }, i.method), ' ', h('code', { class: 'url' }, i.url)),
              ),
              h('div', {}, h('dt', {}, 'Auth'), h('dd', {}, authText(i.auth))),
            ),
            h('button', { type: 'button', class: 'button primary', onclick: () => sendTest(i.id) }, 'Send test event'),
          ),
        ),
      );
    })
    .catch((err) => cards.replaceChildren(h('p', { class: 'problem', role: 'alert' }, err.message)));

  async function sendTest(id) {
    try {
      const d = await post(`/integrations/${encodeURIComponent(id)}/test`);
      toast(`Test event queued for ${id} (${d.delivery_id}).`);
      await refresh();
    } catch (err) {
      toast(err.message, 'error');
    }
  }

  async function resend(d) {
    try {
      await post(`/deliveries/${encodeURIComponent(d.delivery_id)}/resend`);
      toast(`Resending ${d.delivery_id}.`);
      await refresh();
    } catch (err) {
      toast(err.message, 'error');
    }
  }

  function renderRows(deliveries) {
    const focused = document.activeElement?.closest?.('tr[data-delivery]')?.dataset.delivery;
    replace(
      tbody,
      deliveries.map((d) =>
        h(
          'tr',
          { dataset: { delivery: d.delivery_id, state: d.state } },
          h('td', {}, when(d.created_at)),
          h(
            'td',
            { class: 'event' },
            d.test
              ? h('span', { class: 'tag' }, 'test')
              : h('a', { href: `#/documents/${encodeURIComponent(d.document_id)}` }, h('code', {}, d.document_id)),
            h('div', { class: 'muted small' }, `to ${d.integration_id}`),
          ),
          h(
            'td',
            {},
            badge(d.state),
            d.state === 'pending' && d.next_attempt_at
              ? h('div', { class: 'muted small' }, 'next ', when(d.next_attempt_at))
              : null,
          ),
          h('td', {}, attemptsList(d.attempts)),
          h(
            'td',
            {},
            h(
              'button',
              {
                type: 'button',
                class: 'button small',
                'aria-label': `Resend ${d.delivery_id}`,
                onclick: () => resend(d),
              },
              'Resend',
            ),
          ),
        ),
      ),
    );
    if (!deliveries.length)
      tbody.append(
        h(
          'tr',
          {},
          h(
            'td',
            { colspan: '5', class: 'muted' },
            'No deliveries yet. Send a test event, or complete a document on a parser with an integration.',
          ),
        ),
      );
    labelCells(tbody.closest('table'));
    if (focused) tbody.querySelector(`tr[data-delivery="${CSS.escape(focused)}"] button`)?.focus();
  }

  async function refresh() {
    const body = await getOrShow(
      `/deliveries${query({ integration, outcome, document_id: documentId, limit: LIMIT })}`,
      problem,
    );
    if (body === undefined) return;
    tickTimes(tbody);
    const key = JSON.stringify(
      body.deliveries.map((d) => [d.delivery_id, d.state, d.attempts.length, d.next_attempt_at]),
    );
    if (key === lastKey) return;
    lastKey = key;
    renderRows(body.deliveries);
  }

  return {
    refresh,
    update(next) {
      if (next.view !== 'webhooks') return false;
      integration = next.query.get('integration') ?? '';
      outcome = OUTCOMES.includes(next.query.get('outcome')) ? next.query.get('outcome') : '';
      documentId = next.query.get('document_id') ?? '';
      integrationSelect.value = integration;
      outcomeSelect.value = outcome;
      renderChip();
      lastKey = '';
      void refresh();
      return true;
    },
  };
}
