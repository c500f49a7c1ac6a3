import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { zipSync } from 'fflate';
import { runExtract } from '../lib/cli.ts';
import { writeCopies } from '../lib/pdfs.ts';
import { check, type Measured } from '../lib/proc.ts';
import { row, type BenchContext, type Row } from '../lib/row.ts';
import { median } from '../lib/stats.ts';
import { STANDIN_KEY, startStandIn } from '../lib/standin.ts';

/**
 * Issue 46's row (group 15): a first run over an archive of 1,000 one-page PDFs (a zip, deflated)
 * against the same run over the same files in a folder, each the CLI as a child process with a
 * fresh journal, -c 8, inline to the stand-in: the wall time (each part is written to the part
 * space and hashed from there) and the peak memory (the archive is read a member at a time).
 */
export async function archiveRows(ctx: BenchContext): Promise<Row[]> {
  const n = ctx.tiny ? 20 : 1_000;
  const folder = join(ctx.tmp, 'archive-folder');
  ctx.log(`row 15: writing ${n} one-page PDFs and a zip of them`);
  await writeCopies(folder, n, 'a-');
  const zipDir = join(ctx.tmp, 'archive-zip');
  mkdirSync(zipDir, { recursive: true });
  const members = Object.fromEntries(readdirSync(folder).map((name) => [name, readFileSync(join(folder, name))]));
  writeFileSync(join(zipDir, 'invoices.zip'), zipSync(members));
  const home = join(ctx.tmp, 'archive-home');
  const standIn = await startStandIn();
  let state = 0;
  const runs = { folder: [] as Measured[], zip: [] as Measured[] };
  try {
    for (let r = 0; r < ctx.reps; r++)
      for (const [kind, input] of [
        ['folder', folder],
        ['zip', zipDir],
      ] as const) {
        ctx.log(`row 15: first run over the ${kind}, rep ${r + 1}/${ctx.reps}`);
        standIn.reset();
        const m = await runExtract(
          {
            inputs: [input],
            baseUrl: standIn.url,
            key: STANDIN_KEY,
            concurrency: 8,
            out: join(ctx.tmp, 'archive-out.jsonl'),
            state: join(ctx.tmp, `archive-state-${++state}.sqlite`),
          },
          home,
        );
        check(m, `extract over the ${kind}`);
        if (standIn.counts.inline !== n)
          throw new Error(`row 15: the stand-in saw ${standIn.counts.inline} inline extracts, expected ${n}`);
        runs[kind].push(m);
      }
  } finally {
    await standIn.close();
  }
  const wall = (ms: Measured[]) => median(ms.map((m) => m.wall));
  const rss = (ms: Measured[]) => median(ms.map((m) => m.maxRssMb));
  const label = n.toLocaleString('en-US');
  return [
    row(ctx, {
      id: '15 archive wall',
      measurement: `A first run over a zip of ${label} one-page PDFs, inline, stand-in, -c 8: wall time`,
      figure: wall(runs.zip),
      unit: 's',
      peer: 'the same files in a folder',
      peerFigure: wall(runs.folder),
      goal: '<= 1.2x',
      pass: (x) => x <= 1.2,
      note: `median of ${runs.zip.length}; each member is written to the run's part space, then read as a file is`,
    }),
    row(ctx, {
      id: '15 archive mem',
      measurement: `A first run over a zip of ${label} one-page PDFs: peak memory`,
      figure: rss(runs.zip),
      unit: 'MB',
      peer: 'the same files in a folder',
      peerFigure: rss(runs.folder),
      goal: '<= 1.25x (flat)',
      pass: (x) => x <= 1.25,
      note: 'peak RSS of the CLI (/usr/bin/time %M), median; the zip is read a member at a time (src/inputs/zip.ts)',
    }),
  ];
}
