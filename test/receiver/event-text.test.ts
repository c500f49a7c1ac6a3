import { describe, expect, it } from 'vitest';
import { eventText } from '../../src/receiver/event-text.ts';

const bytes = (...parts: Array<string | number[]>): Uint8Array =>
  Buffer.concat(parts.map((p) => (typeof p === 'string' ? Buffer.from(p) : Buffer.from(p))));

describe('eventText: an event body as text', () => {
  it('listen: valid UTF-8 is decoded as sent (a BOM kept, so JSON.parse still refuses it)', () => {
    for (const text of ['{"document_id":"doc_1"}', 'Müller € 𝄞 日本', '\uFEFF{}'])
      expect(eventText(bytes(text))).toBe(text);
  });

  it('listen: each byte that is not UTF-8 becomes \\xHH inside a JSON string; the rest is kept', () => {
    // A lone continuation byte, an overlong form, a surrogate, a sequence cut off at the end.
    const text = eventText(bytes('["a', [0x80], 'b', [0xc0, 0x80], 'é', [0xed, 0xa0, 0x80], 'c', [0xe2, 0x82], '"]'));
    expect(JSON.parse(text)).toEqual(['a\\x80b\\xC0\\x80é\\xED\\xA0\\x80c\\xE2\\x82']);
  });
});
