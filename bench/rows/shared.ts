import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { openState, parseStateSpec, type StateJournal } from '../../src/journal/state/index.ts';
import { stateKey, type JournalFact } from '../../src/journal/journal.ts';
import { startPostgres } from '../../test/helpers/postgres.ts';
import { runExtract } from '../lib/cli.ts';
import { writeInvoices } from '../lib/pdfs.ts';
import { check, type Measured } from '../lib/proc.ts';
import { row, type BenchContext, type Row } from '../lib/row.ts';
import { median } from '../lib/stats.ts';
import { STANDIN_KEY, startStandIn } from '../lib/standin.ts';

/**
 * Row 9, many workers on one journal. The cost of one fact in PostgreSQL (a local
 * server, fsync on) against the JSONL file (write + fdatasync); and a batch's docs/s with 1, 2
 * and 3 worker processes sharing a PostgreSQL journal against the stand-in with a fixed
 * service latency per document, to show that the work divides.
 */
export async function sharedRows(ctx: BenchContext): Promise<Row[]> {
  const server = await startPostgres({ durable: true });
  try {
    const rows = [await factCost(ctx, await server.database())];
    // --tiny: two documents for each of the three workers.
    const n = ctx.tiny ? 6 : 240;
    const latencyMs = 100;
    const dir = join(ctx.tmp, 'shared-in');
    ctx.log(`row 9: writing ${n} invoices`);
    await writeInvoices(dir, n, 'shared');
    const rate: Record<number, number[]> = { 0: [], 1: [], 2: [], 3: [] };
    for (let r = 0; r < ctx.reps; r++) {
      // 0 workers stands for one worker on the file journal: the same run without sharing.
      for (const workers of [0, 1, 2, 3]) {
        const standIn = await startStandIn({ inlineMs: latencyMs });
        try {
          const state = workers === 0 ? join(ctx.tmp, `shared-${r}.jsonl`) : await server.database();
          ctx.log(
            `row 9: ${n} documents, ${workers === 0 ? '1 worker on the file journal' : `${workers} worker${workers === 1 ? '' : 's'} on PostgreSQL`} (rep ${r + 1}/${ctx.reps})`,
          );
          const started = performance.now();
          const runs: Measured[] = await Promise.all(
            Array.from({ length: Math.max(1, workers) }, (_, i) => {
              const home = join(ctx.tmp, `shared-home-${i}`);
              mkdirSync(home, { recursive: true });
              return runExtract(
                {
                  inputs: [dir],
                  baseUrl: standIn.url,
                  key: STANDIN_KEY,
                  concurrency: 2,
                  out: join(ctx.tmp, `shared-out-${i}.jsonl`),
                  state,
                },
                home,
              );
            }),
          );
          const wall = (performance.now() - started) / 1000;
          for (const m of runs) check(m, `extract (${workers} workers)`);
          if (standIn.counts.inline !== n)
            throw new Error(
              `row 9: ${workers} workers sent ${standIn.counts.inline} extract requests for ${n} documents`,
            );
          rate[workers]!.push(n / wall);
        } finally {
          await standIn.close();
        }
      }
    }
    const base = median(rate[1]!);
    rows.push(
      row(ctx, {
        id: '9 w1',
        measurement: `Shared journal: ${n} documents at ${latencyMs} ms each (-c 2), 1 worker on PostgreSQL`,
        figure: base,
        unit: 'docs/s',
        peer: '1 worker on the JSONL file',
        peerFigure: median(rate[0]!),
        goal: '~1x',
        pass: (x) => x >= 0.8,
        note: 'what sharing costs a lone worker: a claim, a release and the facts in the database',
      }),
    );
    for (const workers of [2, 3]) {
      rows.push(
        row(ctx, {
          id: `9 w${workers}`,
          measurement: `Shared journal: the same batch, ${workers} worker processes on one PostgreSQL journal`,
          figure: median(rate[workers]!),
          unit: 'docs/s',
          peer: '1 worker on PostgreSQL',
          peerFigure: base,
          goal: `~${workers}x (the work divides)`,
          pass: (x) => x >= workers * 0.7,
          note: `each document sent once (the stand-in counted ${n} extract requests per run); on a 2-core machine the ${workers} processes also share the CPU`,
        }),
      );
    }
    return rows;
  } finally {
    server.stop();
  }
}

/** One appended fact: PostgreSQL (the fact and its document's projection row, committed) against the JSONL file (write + fdatasync). */
async function factCost(ctx: BenchContext, url: string): Promise<Row> {
  const appends = ctx.tiny ? 20 : 500;
  const perFact: Record<'pg' | 'file', number[]> = { pg: [], file: [] };
  for (let r = 0; r < ctx.reps; r++) {
    for (const which of ['file', 'pg'] as const) {
      const where = which === 'pg' ? url : join(ctx.tmp, `facts-${r}.jsonl`);
      const state: StateJournal = await openState(parseStateSpec(where, ctx.tmp), {
        readOnly: false,
        leaseMs: 30_000,
        log: () => {},
      });
      try {
        const times: number[] = [];
        for (let i = 0; i < appends; i++) {
          const sha256 = `${r}-${i}`.padEnd(64, '0');
          await state.claim([stateKey(sha256, 'bench')], 1);
          const fact: JournalFact = {
            fact: 'submitted',
            at: new Date().toISOString(),
            sha256,
            target: 'bench',
            file: `f${i}.pdf`,
            route: 'upload',
            document_id: `doc_${i}`,
          };
          const t = performance.now();
          await state.append(fact);
          times.push(performance.now() - t);
        }
        perFact[which].push(median(times));
      } finally {
        await state.close();
      }
    }
  }
  return row(ctx, {
    id: '9 fact',
    measurement:
      'Journal: one fact recorded in PostgreSQL (a local server, fsync on; the fact and its document row committed)',
    figure: median(perFact.pg),
    unit: 'ms',
    peer: 'the JSONL file (write + fdatasync)',
    peerFigure: median(perFact.file),
    goal: 'reported',
    note: `median of ${appends} appends through src/journal/state (openState), the same facts for both`,
  });
}
