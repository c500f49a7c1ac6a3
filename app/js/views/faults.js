// Faults: the active fault injection rules, a form to add one, delete and clear.

import { ApiError, del, get, post } from '../api.js';
import { h, labelCells, replace, scroller, toast } from '../dom.js';

/**
 * The fault vocabulary (operations, effects with their parameters and operations, statuses),
 * from the emulator's contract (GET /_emulator/faults/vocabulary): the page keeps no copy.
 */
let vocabulary = { operations: {}, effects: {}, statuses: [] };

export function describeEffect(e) {
  switch (e.type) {
    case 'status':
      return `HTTP ${e.status}${e.status === 429 && e.retry_after !== undefined ? ` (Retry-After ${e.retry_after} s)` : ''}`;
    case 'latency':
      return e.ms !== undefined ? `+${e.ms} ms` : `+${e.min_ms ?? 0}–${e.max_ms ?? 0} ms`;
    case 'reset':
      return `connection reset ${e.when === 'after' ? 'after handling' : 'before handling'}`;
    case 'stall':
      return `stall, closed after ${e.ms} ms`;
    case 'async_error':
      return `document fails: “${e.message}”`;
    case 'delay':
      return `delayed ${e.ms} ms`;
    default:
      return vocabulary.effects[e.type]?.label ?? e.type;
  }
}

export function mount(root) {
  let lastKey = '';
  let available = true;

  const tbody = h('tbody');
  const clearButton = h('button', { type: 'button', class: 'button danger', onclick: clearAll }, 'Clear all rules');
  const problem = h('p', { class: 'problem', role: 'alert', hidden: true });
  const { form, fill: fillForm } = addForm();
  let vocabularyLoaded = false;

  root.append(
    h('div', { class: 'view-head' }, h('h1', { tabindex: '-1' }, 'Faults')),
    h(
      'p',
      { class: 'lead' },
      'Make the emulated service misbehave on purpose, to rehearse your pipeline: error statuses, latency, dropped connections, failed documents, lost or duplicated webhooks.',
    ),
    problem,
    h('div', { class: 'section-head' }, h('h2', {}, 'Active rules'), clearButton),
    scroller(
      h(
        'table',
        { class: 'data faults stack' },
        h(
          'thead',
          {},
          h(
            'tr',
            {},
            h('th', { scope: 'col' }, 'Operation'),
            h('th', { scope: 'col' }, 'Effect'),
            h('th', { scope: 'col', class: 'num' }, 'Chance'),
            h('th', { scope: 'col', class: 'num' }, 'Applied'),
            h('th', { scope: 'col' }, h('span', { class: 'visually-hidden' }, 'Actions')),
          ),
        ),
        tbody,
      ),
      'Active fault rules',
    ),
    h('h2', {}, 'Add a rule'),
    form,
  );

  function renderRows(rules) {
    replace(
      tbody,
      rules.map((r) =>
        h(
          'tr',
          { dataset: { rule: r.id } },
          h(
            'td',
            {},
            h('code', {}, r.operation),
            h('div', { class: 'muted small' }, vocabulary.operations[r.operation] ?? ''),
          ),
          h('td', {}, describeEffect(r.effect)),
          h('td', { class: 'num' }, `${Math.round(r.probability * 1000) / 10} %`),
          h('td', { class: 'num' }, r.times ? `${r.applied ?? 0} of ${r.times}` : String(r.applied ?? 0)),
          h(
            'td',
            {},
            h(
              'button',
              {
                type: 'button',
                class: 'button small',
                'aria-label': `Delete rule ${r.id}`,
                onclick: () => remove(r.id),
              },
              'Delete',
            ),
          ),
        ),
      ),
    );
    if (!rules.length)
      tbody.append(h('tr', {}, h('td', { colspan: '5', class: 'muted' }, 'No rules: the emulator behaves.')));
    labelCells(tbody.closest('table'));
    clearButton.disabled = rules.length === 0;
  }

  async function refresh() {
    if (!available) return;
    let body;
    try {
      if (!vocabularyLoaded) {
        vocabulary = await get('/faults/vocabulary');
        fillForm();
        vocabularyLoaded = true;
      }
      body = await get('/faults');
    } catch (err) {
      problem.hidden = false;
      if (err instanceof ApiError && err.status === 404) {
        available = false;
        problem.textContent =
          'This version of extract serve has no fault injection (GET /_emulator/faults is missing).';
        form.hidden = true;
      } else problem.textContent = err.message;
      return;
    }
    problem.hidden = true;
    const key = JSON.stringify(body.rules);
    if (key === lastKey) return;
    lastKey = key;
    renderRows(body.rules);
  }

  async function remove(id) {
    try {
      await del(`/faults/${encodeURIComponent(id)}`);
      toast(`Deleted rule ${id}.`);
      await refresh();
    } catch (err) {
      toast(err.message, 'error');
    }
  }

  async function clearAll() {
    try {
      await del('/faults');
      toast('Cleared every fault rule.');
      await refresh();
    } catch (err) {
      toast(err.message, 'error');
    }
  }

  function addForm() {
    const operation = h('select', { id: 'fault-operation', name: 'operation' });
    const effect = h('select', { id: 'fault-effect', name: 'effect' });
    const probability = h('input', {
      id: 'fault-probability',
      type: 'number',
      min: '0',
      max: '100',
      step: 'any',
      value: '100',
      inputmode: 'decimal',
    });
    const times = h('input', {
      id: 'fault-times',
      type: 'number',
      min: '1',
      step: '1',
      placeholder: 'no limit',
      inputmode: 'numeric',
    });
    const params = {
      status: h('select', { id: 'fault-status' }),
      ms: h('input', { id: 'fault-ms', type: 'number', min: '0', step: '1', value: '1000', inputmode: 'numeric' }),
      stall_ms: h('input', {
        id: 'fault-stall-ms',
        type: 'number',
        min: '1',
        step: '1',
        value: '30000',
        inputmode: 'numeric',
      }),
      when: h(
        'select',
        { id: 'fault-when' },
        h('option', { value: 'before' }, 'before handling (nothing happened)'),
        h('option', { value: 'after' }, 'after handling (the answer is lost)'),
      ),
      message: h('input', {
        id: 'fault-message',
        type: 'text',
        placeholder: 'injected fault: extraction failed',
        maxlength: '500',
      }),
    };
    const paramLabels = {
      status: 'Status',
      ms: 'Milliseconds',
      stall_ms: 'Close after (ms)',
      when: 'When',
      message: 'Error message',
    };
    const paramRows = Object.fromEntries(
      Object.entries(params).map(([k, input]) => [
        k,
        h('div', { class: 'form-row', hidden: true }, h('label', { for: input.id }, paramLabels[k]), input),
      ]),
    );

    const syncEffects = () => {
      const keep = effect.value;
      replace(
        effect,
        Object.entries(vocabulary.effects)
          .filter(([, e]) => !e.only || e.only.includes(operation.value))
          .map(([type, e]) => h('option', { value: type }, e.label)),
      );
      if ([...effect.options].some((o) => o.value === keep)) effect.value = keep;
      syncParams();
    };
    const syncParams = () => {
      const wanted = vocabulary.effects[effect.value]?.params ?? [];
      for (const [k, row] of Object.entries(paramRows)) row.hidden = !wanted.includes(k);
    };
    operation.addEventListener('change', syncEffects);
    effect.addEventListener('change', syncParams);

    const submit = async (e) => {
      e.preventDefault();
      const type = effect.value;
      const eff = { type };
      if (type === 'status') eff.status = Number(params.status.value);
      if (type === 'latency' || type === 'delay') eff.ms = Number(params.ms.value);
      if (type === 'stall') eff.ms = Number(params.stall_ms.value);
      if (type === 'reset') eff.when = params.when.value;
      if (type === 'async_error' && params.message.value.trim()) eff.message = params.message.value.trim();
      const rule = { operation: operation.value, probability: Number(probability.value) / 100, effect: eff };
      if (times.value) rule.times = Number(times.value);
      try {
        const added = await post('/faults', rule);
        toast(`Added rule ${added.id}: ${added.operation}, ${describeEffect(added.effect)}.`);
        await refresh();
      } catch (err) {
        toast(err.message, 'error');
      }
    };

    const form = h(
      'form',
      { class: 'card fault-form', onsubmit: submit },
      h('div', { class: 'form-row' }, h('label', { for: 'fault-operation' }, 'Operation'), operation),
      h('div', { class: 'form-row' }, h('label', { for: 'fault-effect' }, 'Effect'), effect),
      Object.values(paramRows),
      h('div', { class: 'form-row' }, h('label', { for: 'fault-probability' }, 'Chance (%)'), probability),
      h('div', { class: 'form-row' }, h('label', { for: 'fault-times' }, 'At most (times)'), times),
      h('div', { class: 'form-actions' }, h('button', { type: 'submit', class: 'button primary' }, 'Add rule')),
    );
    // Filled once the vocabulary has come (the first refresh).
    const fill = () => {
      replace(
        operation,
        Object.entries(vocabulary.operations).map(([v, label]) => h('option', { value: v }, `${v} (${label})`)),
      );
      replace(
        params.status,
        vocabulary.statuses.map((s) => h('option', { value: String(s) }, String(s))),
      );
      syncEffects();
    };
    return { form, fill };
  }

  return { refresh };
}
