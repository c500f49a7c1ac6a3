import { describe, expect, it } from 'vitest';
import type { ParserConfig } from '../../src/contract/index.ts';
import { createDocuments } from '../../src/emulator/documents.ts';
import { openStore } from '../../src/emulator/store.ts';
import { mask, Surface, viewable } from '../../src/emulator/surface.ts';
import type { ResolvedIntegration } from '../../src/emulator/webhooks/dispatcher.ts';

/** What /_emulator/ shows and masks, without HTTP. */

const KEY = 'ex_test_0123456789abcdefghij';
const parser: ParserConfig = { parser_id: 'prs_a', parser_name: 'A', api_keys: [KEY], fields: [], webhooks: [] };
const surfaceWith = (integrations: ResolvedIntegration[] = []) =>
  new Surface({
    documents: createDocuments(openStore({ inMemory: true }).db),
    integrations: new Map(integrations.map((i) => [i.id, i])),
    parsers: [parser],
    blobDir: '/blobs',
  });

describe('emulator surface', () => {
  it('surface: a masked secret tells two keys apart and never holds enough of one to use it', () => {
    expect(mask(KEY)).toBe('ex_t…ghij');
    expect(mask('short')).toBe('s…');
    expect(mask('')).toBe('…');
    expect(mask(KEY)).not.toContain(KEY.slice(4, -4));
  });

  it('surface: the parsers list shows masked keys only; a key is revealed by its index, a wrong one is not found', () => {
    const surface = surfaceWith();
    expect(JSON.stringify(surface.parsers())).not.toContain(KEY);
    expect(surface.revealKey('prs_a', '0')).toBe(KEY);
    for (const [id, index] of [
      ['prs_a', '1'],
      ['prs_a', '-0'],
      ['prs_a', '0x0'],
      ['prs_b', '0'],
    ] as const)
      expect(() => surface.revealKey(id, index)).toThrow(expect.objectContaining({ code: 'not_found' }));
  });

  it('surface: integrations show a bearer token masked and never a password', () => {
    const integrations: ResolvedIntegration[] = [
      { id: 'a', parser_id: 'prs_a', url: 'http://x', method: 'POST', auth: { type: 'bearer', token: KEY } },
      {
        id: 'b',
        parser_id: 'prs_a',
        url: 'http://x',
        method: 'POST',
        auth: { type: 'basic', username: 'u', password: 'pw-secret' },
      },
    ];
    const shown = JSON.stringify(surfaceWith(integrations).integrations());
    expect(shown).not.toContain(KEY);
    expect(shown).not.toContain('pw-secret');
  });

  it('surface: a stored PDF or image is viewable, anything else is not (routes/emulator.ts serves it as an attachment)', () => {
    expect(['application/pdf', 'Image/PNG; charset=x', 'image/jpeg'].map(viewable)).toEqual([true, true, true]);
    expect(['text/html', 'image/svg+xml', 'application/xml', ''].map(viewable)).toEqual([false, false, false, false]);
  });

  it('surface: an unknown document is not found, for its details and its file', () => {
    expect(() => surfaceWith().document('doc_x')).toThrow(expect.objectContaining({ code: 'not_found' }));
    expect(() => surfaceWith().storedFile('doc_x')).toThrow(expect.objectContaining({ code: 'not_found' }));
  });
});
