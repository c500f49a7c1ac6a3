// One document: its facts, its error if it failed, its results laid out by the Field definition,
// beside its pages with a box on each value where the engine read it, and the fields that need review.

import { ApiError, get, getParsers } from '../api.js';
import { badge, count, h, replace, tickTimes, when } from '../dom.js';
import { countNulls, nullPaths, renderFields } from '../results.js';
import { linkHighlights, renderPages } from '../pages.js';
import { listHref } from './documents.js';

const SOURCES = { upload: 'Upload (application)', api: 'API', email: 'Email', webhook: 'Inbound webhook' };

export function mount(root, route) {
  const id = route.id;
  const heading = h('h1', { tabindex: '-1', class: 'doc-title' }, id);
  const head = h('div', { class: 'doc-status' });
  const facts = h('dl', { class: 'facts' });
  const body = h('div', { class: 'doc-body' });
  root.append(
    h('p', { class: 'crumbs' }, h('a', { href: listHref() }, '← Documents')),
    h('div', { class: 'view-head' }, heading, head),
    facts,
    body,
  );

  let lastKey = '';
  let done = false;

  async function refresh() {
    if (done) return;
    let doc;
    let parser;
    try {
      [doc, parser] = await Promise.all([get(`/documents/${encodeURIComponent(id)}`), getParsers()]);
    } catch (err) {
      if (err instanceof ApiError && err.status === 404) {
        done = true;
        heading.textContent = 'Document not found';
        replace(body, h('p', { class: 'problem' }, err.message));
        return;
      }
      replace(body, h('p', { class: 'problem', role: 'alert' }, err.message));
      return;
    }
    parser = parser.find((p) => p.parser_id === doc.parser_id);
    const key = JSON.stringify([doc.status, doc.page_count, doc.error]);
    tickTimes(facts);
    if (key === lastKey) return;
    lastKey = key;
    done = doc.status !== 'processing';

    heading.textContent = doc.file_name;
    document.title = `${doc.file_name} · extract serve`;
    replace(head, badge(doc.status));
    const fact = (term, value) => h('div', {}, h('dt', {}, term), h('dd', {}, value));
    replace(
      facts,
      fact('Document ID', h('code', {}, doc.document_id)),
      fact('Parser', parser ? `${parser.parser_name} (${doc.parser_id})` : doc.parser_id),
      fact('Source', SOURCES[doc.source_type] ?? doc.source_type),
      fact('Pages', doc.page_count === null ? '—' : count(doc.page_count)),
      fact('Type', doc.mime_type),
      fact('Received', when(doc.created_at)),
      fact('Finished', when(doc.finished_at)),
      fact(
        'Webhooks',
        h(
          'a',
          { href: `#/webhooks?document_id=${encodeURIComponent(doc.document_id)}` },
          'Deliveries of this document',
        ),
      ),
    );

    if (doc.status === 'processing') {
      replace(
        body,
        h(
          'p',
          { class: 'processing-note' },
          h('span', { class: 'spinner', 'aria-hidden': 'true' }),
          'Extracting… this page updates by itself.',
        ),
      );
    } else if (doc.status === 'error') {
      replace(
        body,
        h(
          'div',
          { class: 'error-box', role: 'alert' },
          h('h2', {}, 'Extraction failed'),
          h('p', { class: 'error-message' }, doc.error ?? 'No reason was recorded.'),
          // Most of the emulator's messages already say so; the refund is said once.
          /\brefund/i.test(doc.error ?? '')
            ? null
            : h('p', { class: 'muted' }, 'The pages reserved for this document were refunded.'),
        ),
      );
    } else {
      const fields = parser?.fields ?? [];
      const nulls = countNulls(fields, doc.results);
      const review = nullPaths(fields, doc.results);
      const list = renderFields(fields, doc.results);
      // Three parts, so that a narrow window can put what needs review first: the summary (the
      // count, why pages were not read, the fields that need review), the pages, then the fields.
      const summary = h(
        'section',
        { class: 'results-summary', 'aria-labelledby': 'results-heading' },
        h(
          'div',
          { class: 'results-head' },
          h('h2', { id: 'results-heading' }, 'Results'),
          nulls
            ? h('span', { class: 'needs-review' }, `${nulls} ${nulls === 1 ? 'field needs' : 'fields need'} review`)
            : h('span', { class: 'badge badge-completed' }, 'every field found'),
        ),
        // Why pages were read as nothing (a scan with no words, OCR's budgets): the emulator's own words.
        doc.notes?.length
          ? h(
              'div',
              { class: 'reading-notes', role: 'note' },
              h('h3', {}, 'Not read'),
              h(
                'ul',
                {},
                doc.notes.map((n) => h('li', {}, n)),
              ),
            )
          : null,
        review.length
          ? h(
              'div',
              { class: 'review-list' },
              h('h3', {}, 'Needs review'),
              h(
                'ul',
                {},
                // Each one leads to its field (far below on a phone, where this list comes first).
                review.map((r) =>
                  h(
                    'li',
                    { dataset: { review: r.path } },
                    h('button', { type: 'button', class: 'link-button', onclick: () => showField(r.path) }, r.label),
                    ' ',
                    h('code', { class: 'field-name' }, r.path),
                  ),
                ),
              ),
            )
          : null,
      );
      const results = h(
        'section',
        { class: 'results', 'aria-label': 'Fields' },
        list,
        h(
          'details',
          { class: 'raw' },
          h('summary', {}, 'Raw JSON'),
          h('pre', {}, JSON.stringify(doc.results, null, 2)),
        ),
      );
      /** Brings a field of the list into view, focused and marked for a moment. */
      const showField = (path) => {
        const target = [...results.querySelectorAll('[data-path], [data-group]')].find(
          (el) => (el.dataset.path ?? el.dataset.group) === path,
        );
        if (!target) return;
        if (!target.hasAttribute('tabindex')) target.setAttribute('tabindex', '-1');
        target.scrollIntoView({ block: 'center' });
        target.focus({ preventScroll: true });
        target.classList.add('flash');
        setTimeout(() => target.classList.remove('flash'), 2000);
      };
      const pages = h('section', { class: 'pages', 'aria-label': 'Pages, with a box on each value found' });
      replace(body, h('div', { class: 'doc-split' }, summary, pages, results));
      // A value whose place is known can be focused (Tab) to show its box.
      for (const el of results.querySelectorAll('[data-path]'))
        if (doc.grounding?.[el.dataset.path]) el.setAttribute('tabindex', '0');
      linkHighlights(results, pages);
      renderPages(pages, doc).catch((err) =>
        pages.append(h('p', { class: 'problem' }, `The pages cannot be shown: ${err.message}`)),
      );
    }
  }

  return { refresh };
}
