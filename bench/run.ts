/**
 * `npm run bench`: runs every benchmark and prints one table. Each row is the
 * median of repeated runs of the project against a peer or a limit measured in the same run
 * on the same machine, and their ratio.
 *
 *   --tiny          each row once at a tiny size (CI: nothing rots; nothing about speed is asserted);
 *                   rows named by their size (4 rerun, 11, 10 mem) at the fewest sizes their
 *                   comparisons need, wrk to its first 1,000 answers, no warm-up passes
 *   --write         also write the table and the machine's description into BENCHMARKS.md
 *                   (with --only, only the rows run are replaced; the others keep their figures)
 *   --json FILE     also write the rows as JSON (the smoke test reads it)
 *   --only 1,4      run only these row groups (1 covers rows 1 and 2)
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { type ChildEmulator, startEmulator } from './lib/emulator.ts';
import { describeMachine } from './lib/machine.ts';
import { ROOT } from './lib/paths.ts';
import type { BenchContext, Row } from './lib/row.ts';
import { mergeTable, renderTable } from './lib/table.ts';
/** Each group's module is loaded when it runs, so that `--only` loads only what it runs. */
const GROUPS: Array<{ id: string; run: (ctx: BenchContext) => Promise<Row[]> }> = [
  { id: '1', run: async (ctx) => (await import('./rows/throughput.ts')).throughputRows(ctx) },
  { id: '3', run: async (ctx) => (await import('./rows/large-file.ts')).largeFileRows(ctx) },
  { id: '4', run: async (ctx) => (await import('./rows/resume.ts')).resumeRows(ctx) },
  { id: '5', run: async (ctx) => (await import('./rows/startup.ts')).startupRows(ctx) },
  { id: '6', run: async (ctx) => (await import('./rows/emulator-reads.ts')).emulatorReadRows(ctx) },
  { id: '7', run: async (ctx) => (await import('./rows/emulator-extraction.ts')).emulatorExtractionRows(ctx) },
  { id: '8', run: async (ctx) => (await import('./rows/polling.ts')).pollingRows(ctx) },
  { id: '9', run: async (ctx) => (await import('./rows/shared.ts')).sharedRows(ctx) },
  { id: '10', run: async (ctx) => (await import('./rows/ocr.ts')).ocrRows(ctx) },
  { id: '11', run: async (ctx) => (await import('./rows/journal-open.ts')).journalOpenRows(ctx) },
  // Row 10 (first-run memory) is group 12: group 10 is OCR.
  { id: '12', run: async (ctx) => (await import('./rows/memory.ts')).memoryRows(ctx) },
  { id: '13', run: async (ctx) => (await import('./rows/watch-skips.ts')).watchSkipRows(ctx) },
  { id: '14', run: async (ctx) => (await import('./rows/install.ts')).installRows(ctx) },
  { id: '15', run: async (ctx) => (await import('./rows/bounds.ts')).boundRows(ctx) },
  { id: '16', run: async (ctx) => (await import('./rows/url-input.ts')).urlInputRows(ctx) },
  { id: '17', run: async (ctx) => (await import('./rows/archive.ts')).archiveRows(ctx) },
];

const SCALE_NOTES = `Sizes in full mode are the issue's: 500 one-page PDFs (rows 1-2), a 2 GiB file (row 3), 6,000, 20,000 and 100,000 files and journals of 1,000 and 20,000 lines (row 4), 20 start-ups (row 5), wrk with 64 connections for 10 s (row 6), four 300-page PDFs (row 7), documents completing after 1, 4, 12 and 20 s (row 8), journals of 10^4, 10^5 and 10^6 documents (row 11), first runs over 1,000, 10,000 and 100,000 one-page PDFs (row 10 mem, group 12), extract watch over 1,000 and 100,000 empty files and one PDF (row 13), and the bounds tests once asserted (group 15): 200 pollers and 20 uploaders on serve, 80 events of 1 MB held by listen, 20 events of 5,000 fields, a 1 GB 2,000-page PDF; nothing is scaled down. The stand-in (bench/lib/standin.ts) runs in the runner's process; \`extract serve\` runs in a child process, in memory, with processing.ms_per_page 0. The CLI runs as a child process with a fresh journal (its default behaviour), -o a JSON Lines file.\n`;

const { values } = parseArgs({
  options: {
    tiny: { type: 'boolean', default: false },
    write: { type: 'boolean', default: false },
    json: { type: 'string' },
    only: { type: 'string' },
  },
});
const tiny = values.tiny;
const only = values.only?.split(',').map((s) => s.trim());
const tmp = mkdtempSync(join(tmpdir(), 'extract-bench-'));
const started = performance.now();
let shared: Promise<ChildEmulator> | undefined;
const ctx: BenchContext = {
  tiny,
  reps: tiny ? 1 : 3,
  tmp,
  log: (m) =>
    process.stderr.write(
      `[bench ${((performance.now() - started) / 1000).toFixed(0).padStart(4)} s, CPU ${cpuSoFar().toFixed(1).padStart(5)} s] ${m}\n`,
    ),
  emulator: async () => {
    if (!tiny) return startEmulator(tmp);
    shared ??= startEmulator(tmp);
    return { ...(await shared), close: async () => {} };
  },
};

/**
 * CPU seconds (user + system) of this process and of the children it has waited for, as
 * /usr/bin/time would count them: each log line says what the rows so far cost.
 */
function cpuSoFar(): number {
  const fields = readFileSync('/proc/self/stat', 'utf8').split(') ')[1]?.split(' ') ?? [];
  // utime, stime, cutime, cstime: fields 14-17 of proc(5), 11-14 after the command's name.
  return fields.slice(11, 15).reduce((sum, ticks) => sum + Number(ticks), 0) / 100;
}

const rows: Row[] = [];
const failures: string[] = [];
/** The groups run, in order (the smoke test checks that its --only lists cover GROUPS). */
const ran: string[] = [];
try {
  for (const group of GROUPS) {
    if (only && !only.includes(group.id)) continue;
    ran.push(group.id);
    try {
      rows.push(...(await group.run(ctx)));
    } catch (err) {
      failures.push(`row ${group.id}: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
      ctx.log(`row ${group.id} FAILED: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
  ctx.log('done');
} finally {
  if (shared) await (await shared.catch(() => undefined))?.close();
  rmSync(tmp, { recursive: true, force: true });
}

const machine = describeMachine();
const minutes = ((performance.now() - started) / 60_000).toFixed(1);
const table = renderTable(rows);
process.stdout.write(
  `\nMachine: ${machine}\nMode: ${tiny ? 'tiny (each row once, tiny sizes; no goal judged)' : 'full'}; ${minutes} min\n\n${table}`,
);
const groups = GROUPS.map((g) => g.id);
if (values.json) writeFileSync(values.json, JSON.stringify({ machine, tiny, rows, failures, groups, ran }, null, 2));
const benchmarks = join(ROOT, 'BENCHMARKS.md');
if (values.write && only && existsSync(benchmarks)) {
  const stamp = `Rows ${only.join(', ')} measured again on ${new Date().toISOString().slice(0, 10)} (\`--only ${only.join(',')}\`, ${minutes} min; ${machine}).`;
  writeFileSync(benchmarks, mergeTable(readFileSync(benchmarks, 'utf8'), rows, stamp));
} else if (values.write) writeFileSync(benchmarks, benchmarksMd(machine, minutes, table));
if (failures.length > 0) {
  process.stderr.write(`\n${failures.join('\n\n')}\n`);
  process.exitCode = 1;
}

function benchmarksMd(machineText: string, mins: string, tableText: string): string {
  return `# Benchmarks

Written by \`npm run bench -- --write\` (bench/run.ts); do not edit by hand. Each figure is the median of
${ctx.reps} runs ${tiny ? "(tiny mode: sizes far below the issue's; the goals are not judged)" : ''}of the project and of its comparison, measured in the same run on the same
machine; the ratio is what to read, the absolute figures move with the machine's load.

Machine: ${machineText}. Run on ${new Date().toISOString().slice(0, 10)}, ${mins} min in all.

${tableText}
${SCALE_NOTES}`;
}
