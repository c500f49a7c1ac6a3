// Results laid out by the parser's Field definition: leaf fields as label/value pairs,
// Object fields as groups, Table fields as real tables. A null is a field the engine could
// not ground in the document: it is marked "needs review", never shown as 0 or blank.

import { h, scroller } from './dom.js';

const labelOf = (field) => field.label ?? field.name.replace(/_/g, ' ');

/** The number of null leaves (a null Object or Table field counts once). */
export function countNulls(fields, values) {
  let n = 0;
  for (const f of fields) {
    const v = values?.[f.name];
    if (v === null || v === undefined) n += 1;
    else if (f.type === 'object') n += countNulls(f.fields, v);
    else if (f.type === 'table' && Array.isArray(v)) for (const row of v) n += countNulls(f.columns, row);
  }
  return n;
}

/** The leaves (and null Object or Table fields) the engine could not ground: path and label, in order. */
export function nullPaths(fields, values, prefix = '', labels = '') {
  const out = [];
  for (const f of fields) {
    const v = values?.[f.name];
    const path = prefix + f.name;
    const label = labels + labelOf(f);
    if (v === null || v === undefined) out.push({ path, label });
    else if (f.type === 'object') out.push(...nullPaths(f.fields, v, `${path}.`, `${label} › `));
    else if (f.type === 'table' && Array.isArray(v)) {
      for (const [i, row] of v.entries())
        out.push(...nullPaths(f.columns, row, `${path}[${i}].`, `${label} row ${i + 1} › `));
    }
  }
  return out;
}

/**
 * One leaf value, written so that null, "" and 0 can never be mistaken for one another.
 * @public test/app/app.proc.test.ts imports it in the browser, where knip cannot follow.
 */
export function leafValue(type, value) {
  if (value === null)
    return h(
      'span',
      { class: 'needs-review', dataset: { null: '' }, title: 'The engine could not find this field in the document' },
      'needs review',
    );
  if (value === undefined) return h('span', { class: 'needs-review missing', title: 'Not in the result' }, 'missing');
  if (value === '') return h('span', { class: 'empty-value', title: 'An empty string' }, 'empty text');
  if (typeof value === 'boolean') return h('span', { class: `bool bool-${value}` }, value ? 'Yes' : 'No');
  if (typeof value === 'number') return h('span', { class: 'number', dataset: { type } }, String(value));
  if (typeof value === 'string') return h('span', { class: 'text', dataset: { type } }, value);
  return h('code', {}, JSON.stringify(value));
}

const fieldName = (field) => h('code', { class: 'field-name' }, field.name);

/** An Object or Table field; `path` (data-group) is how the review list finds it. */
function group(field, path, body, extra) {
  return h(
    'section',
    { class: `group group-${field.type}`, dataset: { field: field.name, group: path } },
    h('h3', {}, labelOf(field), ' ', fieldName(field), extra ?? null),
    body,
  );
}

/** A Table field: an array of row objects whose keys are the column names. `path` names it in the grounding. */
function tableOf(field, rows, path) {
  if (rows === null || rows === undefined) return group(field, path, h('p', {}, leafValue('table', rows)));
  if (!Array.isArray(rows)) return group(field, path, h('p', {}, leafValue('table', rows)));
  const count = h('span', { class: 'muted' }, ` ${rows.length} ${rows.length === 1 ? 'row' : 'rows'}`);
  if (rows.length === 0) return group(field, path, h('p', { class: 'muted' }, 'No rows found in the document.'), count);
  const numeric = (c) => c.type === 'decimal' || c.type === 'integer';
  const table = h(
    'table',
    { class: 'data result-table', dataset: { field: field.name } },
    h('caption', { class: 'visually-hidden' }, labelOf(field)),
    h(
      'thead',
      {},
      h(
        'tr',
        {},
        field.columns.map((c) =>
          h('th', { scope: 'col', class: numeric(c) ? 'num' : null, title: c.name }, labelOf(c)),
        ),
      ),
    ),
    h(
      'tbody',
      {},
      rows.map((row, i) =>
        h(
          'tr',
          {},
          field.columns.map((c) =>
            h(
              'td',
              { class: numeric(c) ? 'num' : null, dataset: { path: `${path}[${i}].${c.name}` } },
              leafValue(c.type, row?.[c.name]),
            ),
          ),
        ),
      ),
    ),
  );
  return group(field, path, scroller(table, labelOf(field)), count);
}

/**
 * A list of fields and their values (the top level, or an Object field's members). Each
 * value carries its path ("vendor.name", "line_items[0].amount") in data-path, which is how
 * the page view finds the box where it was read.
 */
export function renderFields(fields, values, prefix = '') {
  const leaves = [];
  const out = [];
  const flush = () => {
    if (leaves.length) out.push(h('dl', { class: 'fields' }, leaves.splice(0)));
  };
  for (const field of fields) {
    const value = values?.[field.name];
    if (field.type === 'object') {
      flush();
      out.push(
        group(
          field,
          prefix + field.name,
          value === null || value === undefined
            ? h('p', {}, leafValue('object', value))
            : renderFields(field.fields, value, `${prefix}${field.name}.`),
        ),
      );
    } else if (field.type === 'table') {
      flush();
      out.push(tableOf(field, value, prefix + field.name));
    } else {
      leaves.push(
        h(
          'div',
          { class: 'field', dataset: { field: field.name, path: prefix + field.name } },
          h('dt', {}, labelOf(field), ' ', fieldName(field)),
          h('dd', {}, leafValue(field.type, value)),
        ),
      );
    }
  }
  flush();
  return out;
}
