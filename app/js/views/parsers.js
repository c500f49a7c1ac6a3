// Parsers: each one's Field definition, readable and nested, and its API keys masked with a copy button.

import { api, getParsers } from '../api.js';
import { copyText, h, toast } from '../dom.js';

function fieldTree(fields) {
  return h(
    'ul',
    { class: 'fielddef' },
    fields.map((f) =>
      h(
        'li',
        { dataset: { field: f.name } },
        h(
          'div',
          { class: 'fielddef-row' },
          h('code', { class: 'field-name' }, f.name),
          h(
            'span',
            { class: `type type-${f.type}` },
            f.type === 'table'
              ? `table · ${f.columns.length} columns`
              : f.type === 'object'
                ? `object · ${f.fields.length} fields`
                : f.type,
          ),
          f.label ? h('span', { class: 'field-label' }, `“${f.label}”`) : null,
          f.aliases?.length ? h('span', { class: 'aliases muted' }, `also: ${f.aliases.join(', ')}`) : null,
        ),
        f.type === 'object' ? fieldTree(f.fields) : f.type === 'table' ? fieldTree(f.columns) : null,
      ),
    ),
  );
}

function keyRow(parserId, key, index) {
  const done = h('span', { class: 'copied', role: 'status' });
  const button = h(
    'button',
    {
      type: 'button',
      class: 'button small',
      'aria-label': `Copy API key ${key.masked}`,
      onclick: async () => {
        // The list carries masked keys only; the key itself is revealed by this explicit action.
        const revealed = await api('POST', `/parsers/${encodeURIComponent(parserId)}/keys/${index}/reveal`).catch(
          () => null,
        );
        const ok = revealed !== null && (await copyText(revealed.key));
        done.textContent = ok ? 'Copied' : 'Copy failed';
        if (!ok) toast('Could not copy: select the key in the terminal where extract serve started.', 'error');
        setTimeout(() => (done.textContent = ''), 2000);
      },
    },
    'Copy',
  );
  return h('li', { class: 'key' }, h('code', { class: 'masked' }, key.masked), button, done);
}

export function mount(root) {
  const list = h('div', { class: 'cards' }, h('p', { class: 'muted' }, 'Loading…'));
  root.append(
    h('div', { class: 'view-head' }, h('h1', { tabindex: '-1' }, 'Parsers')),
    h(
      'p',
      { class: 'lead' },
      'A parser turns a document into results shaped by its Field definition. These come from the configuration of extract serve (--config).',
    ),
    list,
  );
  getParsers()
    .then((parsers) =>
      list.replaceChildren(
        ...parsers.map((p) =>
          h(
            'article',
            { class: 'card parser', dataset: { parser: p.parser_id } },
            h('h2', {}, p.parser_name, ' ', h('code', { class: 'muted' }, p.parser_id)),
            h('h3', {}, 'API keys'),
            p.api_keys.length
              ? h(
                  'ul',
                  { class: 'keys' },
                  p.api_keys.map((key, i) => keyRow(p.parser_id, key, i)),
                )
              : h('p', { class: 'muted' }, 'No API keys.'),
            h('h3', {}, 'Field definition'),
            fieldTree(p.fields),
          ),
        ),
      ),
    )
    .catch((err) => list.replaceChildren(h('p', { class: 'problem', role: 'alert' }, err.message)));
  return {};
}
