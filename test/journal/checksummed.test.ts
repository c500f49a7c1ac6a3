import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { crc32 } from 'node:zlib';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { readChecksummed, writeChecksummed, writeChecksummedChunks } from '../../src/journal/state/checksummed.ts';
import { tempDir } from '../helpers/cli.ts';

/**
 * The caches beside a journal are written under a CRC-32 of their body. The stat cache writes
 * its body in pieces, a block at a time (the whole text, three times over, was
 * a first run's peak at 100,000 files): the file must be the one the whole text makes.
 */

const piece = fc.string({ unit: fc.constantFrom('a', '\0', '\n', 'é', '€', '😀', '/', ':'), maxLength: 40 });

describe('checksummed files', () => {
  it('written in pieces (any split, multi-byte characters, large): the bytes of the whole text, which reads back', () => {
    const dir = tempDir('extract-checksummed-');
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 30 }), fc.nat(3), (pieces, repeat) => {
        // Some bodies span several blocks (a block is about 256 KB).
        const all = Array.from({ length: 1 + repeat * 4000 }, () => pieces).flat();
        const text = all.join('');
        const whole = join(dir, 'whole');
        const inPieces = join(dir, 'pieces');
        writeChecksummed(whole, text);
        writeChecksummedChunks(inPieces, () => all);
        const body = Buffer.from(text, 'utf8');
        const expected = Buffer.concat([Buffer.from(`crc32:${crc32(body).toString(16)}:${body.length}\n`), body]);
        expect(readFileSync(inPieces).equals(expected)).toBe(true);
        expect(readFileSync(whole).equals(expected)).toBe(true);
        expect(readChecksummed(inPieces)).toBe(text);
      }),
      { numRuns: 40 },
    );
  });

  it('a body that changes between its two readings is refused, and leaves no file', () => {
    const dir = tempDir('extract-checksummed-');
    let reading = 0;
    expect(() => writeChecksummedChunks(join(dir, 'c'), () => (reading++ === 0 ? ['ab'] : ['abc']))).toThrow(
      /changed while it was written/,
    );
    expect(readChecksummed(join(dir, 'c'))).toBeUndefined();
  });
});
