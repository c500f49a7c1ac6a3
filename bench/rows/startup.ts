import { CLI, NODE } from '../lib/paths.ts';
import { run } from '../lib/proc.ts';
import { row, type BenchContext, type Row } from '../lib/row.ts';
import { median } from '../lib/stats.ts';

/** Row 5: `extract --version` and `extract --help` against `node -e 0` on the same Node. */
export async function startupRows(ctx: BenchContext): Promise<Row[]> {
  const runs = ctx.tiny ? 1 : 20;
  const commands: Record<'node' | 'version' | 'help', string[]> = {
    node: ['-e', '0'],
    version: [CLI, '--version'],
    help: [CLI, '--help'],
  };
  const times: Record<keyof typeof commands, number[]> = { node: [], version: [], help: [] };
  ctx.log(`row 5: ${runs} start-ups of each`);
  // Interleaved, so a busy moment of the machine hits all three alike.
  for (let i = 0; i < runs; i++) {
    for (const name of ['node', 'version', 'help'] as const) {
      const t = performance.now();
      const r = await run(NODE, commands[name]);
      times[name].push(performance.now() - t);
      if (r.code !== 0) throw new Error(`row 5: ${name} exited ${r.code}: ${r.stderr}`);
    }
  }
  const base = median(times.node);
  // The goals: --version needs nothing but package.json; --help loads the start-up file only
  // (within 1.3x).
  const goals = { version: 1.3, help: 1.3 } as const;
  const notes = {
    version: undefined,
    help: "Profiled (task-clock, stdout a pipe, medians of 30 interleaved): over node's own start, loading dist/cli/main.js and errors.js (140 KB, from the compile cache) ~3.6 ms, building commander's program with every command's flags ~3.7 ms, parsing and writing the help ~2.2 ms. Cut: Node's network and stream modules (node:http through connections.ts's defaults; net and the streams through process.stdout on a pipe: help goes by write(2)), and errors.js's two chunks (5 files of ours -> 3): 35.9 -> 29.3 ms of CPU (node -e 0: 20.1), 1.79x -> 1.46x. Tried: registering no command but the root changed nothing measurable; registering every command is ~6 ms of a one-file rerun too. Then (instructions counted by callgrind, stdout a file; node -e 0 87 M): loading dist/cli/main.js +15 M, building the program +13 M, parsing, formatting and writing the help +21 M: --help 136 M (1.56x). Off a terminal the help is one fixed text (80 columns, no colours), so the build prints it into dist/cli/help.txt and bin/extract.js copies it by write(2), as it answers --version: 136 -> 100 M (1.15x); --version also writes by write(2) instead of process.stdout, which on a pipe or a file loaded the streams: 98 -> 88 M (1.13x -> 1.01x). On a terminal (its width shapes the help) the bundle still prints it: 1.5x",
  } as const;
  return (['version', 'help'] as const).map((name) =>
    row(ctx, {
      id: `5 ${name}`,
      measurement: `Start-up: extract --${name} (median of ${runs})`,
      figure: median(times[name]),
      unit: 'ms',
      peer: 'node -e 0, same Node',
      peerFigure: base,
      goal: `<= ${goals[name]}x`,
      pass: (x) => x <= goals[name],
      ...(notes[name] === undefined ? {} : { note: notes[name] }),
    }),
  );
}
