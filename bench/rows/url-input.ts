import { createReadStream, statSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { runExtract } from '../lib/cli.ts';
import { check, type Measured } from '../lib/proc.ts';
import { row, type BenchContext, type Row } from '../lib/row.ts';
import { median } from '../lib/stats.ts';
import { STANDIN_KEY, startStandIn } from '../lib/standin.ts';
import { writeLarge } from './large-file.ts';

/**
 * Row 16: a large document read from a URL (a local HTTP server, as object storage serves it)
 * against the same file on disk, both by upload-and-poll to the stand-in. A URL is copied to the
 * run's part space and hashed before it is sent (src/inputs/remote.ts), so its memory must stay
 * that of a file (row 3's bound) while its wall time pays for one more pass over the bytes.
 */
export async function urlInputRows(ctx: BenchContext): Promise<Row[]> {
  const size = ctx.tiny ? 16 * 2 ** 20 : 2 * 2 ** 30;
  const file = join(ctx.tmp, 'large.pdf');
  ctx.log(`row 16: writing a ${size / 2 ** 20} MB file`);
  writeLarge(file, size);
  const source = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/pdf', 'content-length': String(statSync(file).size) });
    createReadStream(file).pipe(res);
  });
  await new Promise<void>((resolve) => source.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(source.address() as AddressInfo).port}/large.pdf`;
  const standIn = await startStandIn();
  try {
    const fromUrl: Measured[] = [];
    const fromFile: Measured[] = [];
    for (let r = 0; r < ctx.reps; r++) {
      ctx.log(`row 16: rep ${r + 1}/${ctx.reps}`);
      for (const [input, into] of [
        [url, fromUrl],
        [file, fromFile],
      ] as const) {
        standIn.reset();
        const m = await runExtract(
          {
            inputs: [input],
            baseUrl: standIn.url,
            key: STANDIN_KEY,
            out: join(ctx.tmp, 'url.jsonl'),
            state: null,
            extra: ['--route', 'upload', '--poll-interval', '50ms'],
          },
          join(ctx.tmp, 'home'),
        );
        check(m, `extract ${input === url ? 'a URL' : 'a file'}`);
        const put = standIn.puts[0];
        if (!put || put.bytes !== size)
          throw new Error(`row 16: the stand-in received ${put?.bytes ?? 0} of ${size} bytes`);
        into.push(m);
      }
    }
    const label = `${ctx.tiny ? '16 MB' : '2 GB'} document, upload-and-poll, stand-in`;
    return [
      row(ctx, {
        id: '16 rss',
        measurement: `Peak RSS of the CLI, a ${label}, read from a URL`,
        figure: median(fromUrl.map((m) => m.maxRssMb)),
        unit: 'MB',
        peer: 'the same document as a file on disk',
        peerFigure: median(fromFile.map((m) => m.maxRssMb)),
        goal: '<= 1.1x',
        pass: (x) => x <= 1.1,
        note: 'the URL is copied to the run part space and hashed before it is sent (a document is known by its content before it is paid for)',
      }),
      row(ctx, {
        id: '16 wall',
        measurement: `Wall time of the whole run, a ${label}, read from a URL`,
        figure: median(fromUrl.map((m) => m.wall)),
        unit: 's',
        peer: 'the same document as a file on disk',
        peerFigure: median(fromFile.map((m) => m.wall)),
        goal: 'reported',
        pass: () => true,
        note: 'one more pass over the bytes: the download to the part space',
      }),
    ];
  } finally {
    await standIn.close();
    source.closeAllConnections();
    source.close();
  }
}
