import { writeFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { runExtract } from '../lib/cli.ts';
import { makePdf } from '../../test/helpers/pdf.ts';
import { check } from '../lib/proc.ts';
import { row, type BenchContext, type Row } from '../lib/row.ts';
import { STANDIN_KEY, startStandIn } from '../lib/standin.ts';

/** The spec's polling guidance: start at 2 s, x1.5 after each poll, at most 30 s apart. */
const GUIDANCE = { firstMs: 2000, factor: 1.5, capMs: 30_000 };

/**
 * GETs the guidance needs for a document that completes `readyMs` after submission: polls at
 * 2, 5, 9.5, 16.25 s... and the first one at or after readyMs sees it completed. Written here
 * from the spec, not from src/client/backoff.ts, so the row does not check the code against itself.
 */
export function guidancePolls(readyMs: number, scale: number): number {
  let at = 0;
  let delay = GUIDANCE.firstMs * scale;
  for (let polls = 1; ; polls++) {
    at += delay;
    if (at >= readyMs) return polls;
    delay = Math.min(GUIDANCE.capMs * scale, delay * GUIDANCE.factor);
  }
}

/**
 * Row 8: documents that the stand-in completes T after submission, collected by one CLI run
 * by upload-and-poll; GETs counted at the stand-in against the guidance's schedule. The T
 * values sit between two polls of the schedule, so network jitter cannot move the count.
 */
export async function pollingRows(ctx: BenchContext): Promise<Row[]> {
  // --tiny runs the schedule 20 times faster (--poll-interval 100ms, --poll-max-interval 1500ms).
  const scale = ctx.tiny ? 0.05 : 1;
  const readySeconds = [1, 4, 12, 20];
  const dir = join(ctx.tmp, 'poll');
  mkdirSync(dir, { recursive: true });
  const pdf = await makePdf([['Invoice Number: POLL-1']]);
  for (const [i, s] of readySeconds.entries())
    writeFileSync(join(dir, `poll-${s * 1000 * scale}.pdf`), Buffer.concat([pdf, Buffer.from(`%poll ${i}\n`)]));
  const standIn = await startStandIn({ processingMs: (name) => Number(/poll-([\d.]+)\.pdf/.exec(name)?.[1] ?? 0) });
  try {
    ctx.log(`row 8: documents completing after ${readySeconds.map((s) => s * scale).join(', ')} s`);
    const m = await runExtract(
      {
        inputs: [dir],
        baseUrl: standIn.url,
        key: STANDIN_KEY,
        concurrency: 4,
        out: join(ctx.tmp, 'poll.jsonl'),
        state: null,
        extra: [
          '--route',
          'upload',
          '--poll-interval',
          `${GUIDANCE.firstMs * scale}ms`,
          '--poll-max-interval',
          `${GUIDANCE.capMs * scale}ms`,
        ],
      },
      join(ctx.tmp, 'home'),
    );
    check(m, 'extract (polling)');
    let measured = 0;
    let expected = 0;
    const detail: string[] = [];
    for (const [id, gets] of standIn.getsByDocument) {
      const readyMs = Number(/poll-([\d.]+)\.pdf/.exec(standIn.fileNameOf.get(id) ?? '')?.[1]);
      const want = guidancePolls(readyMs, scale);
      measured += gets;
      expected += want;
      detail.push(`T=${(readyMs / 1000 / scale).toFixed(0)} s: ${gets} (schedule ${want})`);
    }
    if (standIn.getsByDocument.size !== readySeconds.length)
      throw new Error(`row 8: ${standIn.getsByDocument.size} documents submitted, expected ${readySeconds.length}`);
    return [
      row(ctx, {
        id: '8',
        measurement: `Polling: GETs for ${readySeconds.length} async documents completing after ${readySeconds.join(', ')} s${ctx.tiny ? ' (x0.05)' : ''}`,
        figure: measured,
        unit: 'GETs',
        peer: 'the guidance: 2 s, x1.5, cap 30 s',
        peerFigure: expected,
        goal: '<= 1x',
        pass: (x) => x <= 1,
        note: detail.sort().join('; '),
      }),
    ];
  } finally {
    await standIn.close();
  }
}
