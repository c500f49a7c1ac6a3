import { PassThrough, Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { DocumentRecord } from '../../src/outputs/record-schema.ts';
import { createStreamWriter } from '../../src/outputs/stream.ts';
import { SAMPLE, asWritten } from './helpers.ts';

describe('createStreamWriter', () => {
  it('stream: writes one JSON line per record, as each is given', async () => {
    const out = new PassThrough();
    const lines: string[] = [];
    out.on('data', (chunk: Buffer) => lines.push(chunk.toString()));
    const writer = createStreamWriter(out);
    for (const record of SAMPLE) await writer.write(record);
    expect(lines).toHaveLength(3);
    expect(lines.map((l) => DocumentRecord.parse(JSON.parse(l)))).toEqual(SAMPLE.map(asWritten));
    expect(lines.every((l) => l.endsWith('\n') && !l.slice(0, -1).includes('\n'))).toBe(true);
  });

  it('stream: waits for a slow reader (backpressure) and loses nothing', async () => {
    const received: string[] = [];
    const out = new Writable({
      highWaterMark: 16,
      write(chunk: Buffer, _enc, done) {
        received.push(chunk.toString());
        setTimeout(done, 1);
      },
    });
    const writer = createStreamWriter(out);
    for (let i = 0; i < 20; i++) await writer.write({ ...SAMPLE[2]!, file: `f${i}.pdf` });
    await new Promise<void>((resolve) => out.end(resolve));
    expect(received.map((l) => DocumentRecord.parse(JSON.parse(l)).file)).toEqual(
      Array.from({ length: 20 }, (_, i) => `f${i}.pdf`),
    );
  });

  it('stream: a reader that goes away (EPIPE) stops the output without failing the run', async () => {
    const out = new Writable({
      write(_chunk, _enc, done) {
        done(Object.assign(new Error('write EPIPE'), { code: 'EPIPE' }));
      },
    });
    const writer = createStreamWriter(out);
    await writer.write(SAMPLE[0]!);
    await new Promise((r) => setImmediate(r));
    expect(writer.closed).toBe(true);
    await expect(writer.write(SAMPLE[1]!)).resolves.toBeUndefined();
  });
});
