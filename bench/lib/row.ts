import type { ChildEmulator } from './emulator.ts';

/** One line of the table: the project's figure, the comparison measured in the same run, their ratio. */
export type Row = {
  id: string;
  measurement: string;
  /** The project's figure and its unit ("docs/s", "ms", "MB"). */
  figure: number;
  unit: string;
  /** What it is compared with: a peer (what users run today) or a limit. */
  peer: string;
  peerFigure: number;
  /** figure / peerFigure. */
  ratio: number;
  goal: string;
  /** Whether the goal is met; null when this row has no goal (reported only) or in --tiny mode. */
  met: boolean | null;
  note?: string;
};

export type BenchContext = {
  tiny: boolean;
  /** Repetitions of each timed run; the table reports their median. */
  reps: number;
  /** A scratch folder for this run, removed at the end. */
  tmp: string;
  log: (message: string) => void;
  /**
   * `extract serve` in a child process (lib/emulator.ts). Each call starts a fresh one, except
   * in --tiny mode, where the rows share one (its start is most of what a tiny row costs) and
   * its close() leaves it running for the next row; run.ts stops it at the end.
   */
  emulator: () => Promise<ChildEmulator>;
};

/** A row, its ratio computed, its goal judged (never in --tiny mode, which asserts nothing about speed). */
export function row(ctx: BenchContext, r: Omit<Row, 'ratio' | 'met'> & { pass?: (ratio: number) => boolean }): Row {
  const ratio = r.figure / r.peerFigure;
  const { pass, ...rest } = r;
  return { ...rest, ratio, met: ctx.tiny || pass === undefined ? null : pass(ratio) };
}
