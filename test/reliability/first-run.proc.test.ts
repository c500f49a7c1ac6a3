import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, describe, expect } from 'vitest';
import { it } from '../helpers/fixtures.ts';
import { STANDIN_KEY, startStandIn, type StandIn } from '../../bench/lib/standin.ts';
import { CLI, cleanEnv } from '../helpers/cli.ts';
import { makePdf } from '../helpers/pdf.ts';

/**
 * A first run over distinct one-page PDFs sent inline to a stand-in (a bare node:http server
 * answering at once) at -c 8 completes, each document sent once and each record written. Its peak
 * memory, which must not grow with the batch, is bench row "10 mem" (group 12: bench/rows/memory.ts),
 * measured there rather than asserted here.
 */

const FILES = 100;

let standIn: StandIn;
let dir: string;

it.beforeAll(async ({ fileTempDir }) => {
  standIn = await startStandIn();
  dir = fileTempDir('extract-first-run-');
  const template = await makePdf([['Invoice Number: INV-000001', 'Total: 101.00']]);
  mkdirSync(join(dir, 'in'));
  // Distinct content (a comment after %%EOF), so no file is a copy of another.
  for (let i = 0; i < FILES; i++)
    writeFileSync(
      join(dir, 'in', `doc-${String(i).padStart(5, '0')}.pdf`),
      Buffer.concat([template, Buffer.from(`%${i}\n`)]),
    );
}, 120_000);

afterAll(async () => {
  await standIn?.close();
});

describe('a first run', () => {
  it(`over ${FILES} files at -c 8: exit 0, each document sent once, each record written`, async () => {
    standIn.reset();
    const run = await execa(
      process.execPath,
      [
        CLI,
        join(dir, 'in'),
        '--base-url',
        standIn.url,
        '--api-key',
        STANDIN_KEY,
        '-c',
        '8',
        '--no-progress',
        '-q',
        '--state',
        join(dir, 'state.sqlite'),
        '-o',
        join(dir, 'out.jsonl'),
      ],
      { env: cleanEnv(), reject: false },
    );
    expect(run.exitCode, run.stderr).toBe(0);
    expect(standIn.counts.inline).toBe(FILES);
    expect(readFileSync(join(dir, 'out.jsonl'), 'utf8').trim().split('\n')).toHaveLength(FILES);
  });
});
