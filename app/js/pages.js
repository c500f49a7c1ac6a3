// The document's pages, with a box on every value the engine grounded. PDFs are drawn by
// pdfjs-dist's browser build (served by the emulator under /_app/pdfjs/), images shown as
// images. Boxes are placed in percent of the page, so they follow the page's size.

import { h } from './dom.js';

const PDFJS = '/_app/pdfjs/';
let pdfjs = null;

/** pdfjs, loaded on first use only (the other views never pay for it). */
async function loadPdfjs() {
  if (!pdfjs) {
    pdfjs = await import(`${PDFJS}build/pdf.min.mjs`);
    pdfjs.GlobalWorkerOptions.workerSrc = `${PDFJS}build/pdf.worker.min.mjs`;
  }
  return pdfjs;
}

/** The boxes of one page, as absolutely placed outlines over it. */
function overlay(grounding, pageNumber, width, height) {
  const layer = h('div', { class: 'page-boxes', 'aria-hidden': 'true' });
  for (const [path, place] of Object.entries(grounding ?? {})) {
    if (place.page !== pageNumber) continue;
    const [x0, top, x1, bottom] = place.box;
    const box = h('div', { class: 'value-box', dataset: { path }, title: path });
    box.style.left = `${(100 * x0) / width}%`;
    box.style.top = `${(100 * top) / height}%`;
    box.style.width = `${(100 * (x1 - x0)) / width}%`;
    box.style.height = `${(100 * (bottom - top)) / height}%`;
    layer.append(box);
  }
  return layer;
}

/**
 * Renders the pages of a document into `root`: a PDF page by page (canvas plus boxes),
 * a PNG or JPEG as an image with the boxes of page 1. Returns the number of pages shown.
 */
export async function renderPages(root, doc) {
  const mime = (doc.mime_type || '').split(';')[0].trim().toLowerCase();
  if (mime === 'image/png' || mime === 'image/jpeg') {
    const img = h('img', { src: doc.file_url, alt: `Page 1 of ${doc.file_name}`, class: 'page-image' });
    const frame = h('div', { class: 'page', dataset: { page: '1' } }, img);
    root.append(frame);
    await img.decode().catch(() => {});
    if (img.naturalWidth) frame.append(overlay(doc.grounding, 1, img.naturalWidth, img.naturalHeight));
    return 1;
  }
  if (mime !== 'application/pdf') {
    root.append(h('p', { class: 'muted' }, `Pages of ${mime || 'this type'} are not shown here.`));
    return 0;
  }
  const lib = await loadPdfjs();
  const task = lib.getDocument({
    url: doc.file_url,
    isEvalSupported: false,
    disableFontFace: true,
    standardFontDataUrl: `${PDFJS}standard_fonts/`,
    cMapUrl: `${PDFJS}cmaps/`,
    cMapPacked: true,
  });
  const pdf = await task.promise;
  try {
    for (let n = 1; n <= pdf.numPages; n++) {
      const page = await pdf.getPage(n);
      const base = page.getViewport({ scale: 1 });
      const scale =
        Math.min(2, Math.max(1, (root.clientWidth || base.width) / base.width)) * (window.devicePixelRatio || 1);
      const viewport = page.getViewport({ scale });
      const canvas = h('canvas', {
        width: Math.floor(viewport.width),
        height: Math.floor(viewport.height),
        role: 'img',
        'aria-label': `Page ${n} of ${pdf.numPages}`,
      });
      const frame = h(
        'div',
        { class: 'page', dataset: { page: String(n) } },
        canvas,
        overlay(doc.grounding, n, base.width, base.height),
      );
      root.append(frame);
      await page.render({ canvas, canvasContext: canvas.getContext('2d'), viewport }).promise;
      page.cleanup();
    }
    return pdf.numPages;
  } finally {
    await task.destroy();
  }
}

/**
 * Scrolls the page pane (and only it) so that `box` is in view, with a margin around it. The
 * window never moves: the field the user is pointing at stays where it is. Where the pane does
 * not scroll by itself (a narrow window, where it is part of the page), nothing moves.
 */
function showInPane(pane, box) {
  if (pane.scrollHeight <= pane.clientHeight && pane.scrollWidth <= pane.clientWidth) return;
  const margin = 24;
  // The part of the pane on screen: near the end of the page it slides up under the sticky header.
  const rect = pane.getBoundingClientRect();
  const header = document.querySelector('header.top')?.getBoundingClientRect().bottom ?? 0;
  const view = {
    top: Math.max(rect.top, header),
    bottom: Math.min(rect.bottom, window.innerHeight),
    left: rect.left,
    right: rect.right,
  };
  const r = box.getBoundingClientRect();
  // Out of view (or at its edge): brought to the middle of the pane, with the page around it.
  let top = pane.scrollTop;
  let left = pane.scrollLeft;
  if (r.top < view.top + margin || r.bottom > view.bottom - margin)
    top += (r.top + r.bottom) / 2 - (view.top + view.bottom) / 2;
  if (r.left < view.left + margin || r.right > view.right - margin)
    left += (r.left + r.right) / 2 - (view.left + view.right) / 2;
  if (top === pane.scrollTop && left === pane.scrollLeft) return;
  const smooth = !window.matchMedia('(prefers-reduced-motion: reduce)').matches;
  pane.scrollTo({ top, left, behavior: smooth ? 'smooth' : 'auto' });
}

/**
 * Hovering or focusing a value (an element with data-path in `fields`) highlights its box,
 * and hovering a box highlights its value.
 */
export function linkHighlights(fields, pages) {
  const set = (path, on) => {
    for (const el of [...fields.querySelectorAll('[data-path]'), ...pages.querySelectorAll('.value-box')]) {
      if (el.dataset.path === path) el.classList.toggle('highlight', on);
    }
    if (on) {
      const box = [...pages.querySelectorAll('.value-box')].find((b) => b.dataset.path === path);
      if (box) showInPane(pages, box);
    }
  };
  const pathOf = (event) => event.target.closest?.('[data-path]')?.dataset.path;
  for (const [root, on, off] of [
    [fields, 'mouseover', 'mouseout'],
    [fields, 'focusin', 'focusout'],
    [pages, 'mouseover', 'mouseout'],
  ]) {
    root.addEventListener(on, (e) => {
      const path = pathOf(e);
      if (path) set(path, true);
    });
    root.addEventListener(off, (e) => {
      const path = pathOf(e);
      if (path) set(path, false);
    });
  }
}
