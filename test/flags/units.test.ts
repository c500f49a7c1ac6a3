import fc from 'fast-check';
import { describe, expect } from 'vitest';
import { durationFlag, parseDuration, parseSize, sizeFlag } from '../../src/flags/units.ts';
import { call, inlineBody } from '../helpers/emulator.ts';
import { routeChooser, UPLOAD_ONLY_ABOVE } from '../../src/batch/route.ts';
import { DEFAULT_INLINE_MAX } from '../../src/flags/batch.ts';
import { it } from '../helpers/fixtures.ts';

describe('units', () => {
  it('durations and sizes written as flag defaults read back unchanged', () => {
    fc.assert(fc.property(fc.integer({ min: 1, max: 10 ** 9 }), (ms) => parseDuration(durationFlag(ms)) === ms));
    fc.assert(fc.property(fc.integer({ min: 1, max: 10 ** 12 }), (b) => parseSize(sizeFlag(b)) === b));
    expect([
      durationFlag(0),
      durationFlag(2000),
      durationFlag(60_000),
      durationFlag(15 * 60_000),
      sizeFlag(5_000_000),
    ]).toEqual(['0s', '2s', '60s', '15m', '5MB']);
  });
  it('sizes: bytes, KB/MB/GB in powers of 1000, KiB/MiB in powers of 1024', () => {
    expect(parseSize('500000')).toBe(500_000);
    expect(parseSize('512KB')).toBe(512_000);
    expect(parseSize('8MB')).toBe(8_000_000);
    expect(parseSize('8 mb')).toBe(8_000_000);
    expect(parseSize('1.5GB')).toBe(1_500_000_000);
    expect(parseSize('10MiB')).toBe(10 * 1024 * 1024);
  });
  it('sizes: anything else is a usage error naming the flag', () => {
    expect(() => parseSize('8 parsecs', '--inline-max')).toThrow(/--inline-max: "8 parsecs" is not a size/);
    expect(() => parseSize('-1')).toThrow(/not a size/);
  });
  it('durations: ms, s, m, h; a bare number is seconds', () => {
    expect(parseDuration('500ms')).toBe(500);
    expect(parseDuration('2s')).toBe(2000);
    expect(parseDuration('15m')).toBe(900_000);
    expect(parseDuration('1h')).toBe(3_600_000);
    expect(parseDuration('30')).toBe(30_000);
    expect(parseDuration('1.5s')).toBe(1500);
    expect(() => parseDuration('soon', '--poll-timeout')).toThrow(/--poll-timeout: "soon" is not a duration/);
  });
});

describe('routing', () => {
  it('auto: inline up to --inline-max, upload above', () => {
    expect(routeChooser('auto', DEFAULT_INLINE_MAX)(DEFAULT_INLINE_MAX).route).toBe('inline');
    expect(routeChooser('auto', DEFAULT_INLINE_MAX)(DEFAULT_INLINE_MAX + 1).route).toBe('upload');
  });
  it('the default inline cap leaves room for base64: a file of --inline-max bytes is not too large for the default service, nor for the deployed one', async ({
    emulator,
  }) => {
    // The default emulator (10 MiB bodies, as the spec's limit) over HTTP, with the body the
    // pipeline sends: base64 of the whole file plus a long name. Zeros are no document (422),
    // but the size is judged first: 413 means the default cap would send what cannot go inline.
    const server = await emulator();
    const body = (size: number) => inlineBody(Buffer.alloc(size), `${'n'.repeat(250)}.pdf`);
    expect((await call(server, 'POST', '/api/v1/extract', { body: body(DEFAULT_INLINE_MAX) })).status).toBe(422);
    // The check can fail: a cap of 8.25 MB would send bodies the service refuses.
    expect((await call(server, 'POST', '/api/v1/extract', { body: body(DEFAULT_INLINE_MAX * 2.5) })).status).toBe(413);
    // And the deployed service's smaller limit (4.5 MB bodies) takes a file of the default cap too.
    const deployed = await emulator({ profile: 'deployed' });
    expect((await call(deployed, 'POST', '/api/v1/extract', { body: body(DEFAULT_INLINE_MAX) })).status).not.toBe(413);
    expect((await call(deployed, 'POST', '/api/v1/extract', { body: body(DEFAULT_INLINE_MAX * 1.1) })).status).toBe(
      413,
    );
  });
  it('--route forces a route', () => {
    expect(routeChooser('upload', DEFAULT_INLINE_MAX)(10).route).toBe('upload');
    expect(routeChooser('inline', DEFAULT_INLINE_MAX)(50_000_000).route).toBe('inline');
  });
  it('over 300 MB always uploads, whatever --route says', () => {
    expect(routeChooser('inline', Number.MAX_SAFE_INTEGER)(UPLOAD_ONLY_ABOVE + 1).route).toBe('upload');
  });
});
