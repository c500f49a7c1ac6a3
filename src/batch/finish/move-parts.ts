/**
 * --move-done for the parts of an input file (src/inputs/: a zip's members, a mail's
 * attachments): the input file itself moves, once every part of it that is a document is done.
 * One part still pending, failed or unsent keeps it where it is, parts and all, for the next run
 * (which pays only for what is not done). --move-failed moves no container: its done parts would
 * go with it.
 */
import { containerPath, type PartOf } from '../../inputs/part.ts';
import type { ReportEntry } from '../summary.ts';
import { type MoveResult, moveInto } from './move.ts';

/** The parts of each container met in the plan, by its real path, and whether all are done. */
export class Containers {
  readonly #seen = new Map<string, { part: PartOf; done: boolean; entries: Array<[number, ReportEntry]> }>();

  /** A part's entry; `done`: it goes to the done folder. */
  add(part: PartOf, ordinal: number, entry: ReportEntry | undefined, done: boolean): void {
    const known = this.#seen.get(part.realPath) ?? { part, done: true, entries: [] };
    known.done &&= done && entry !== undefined;
    if (entry !== undefined) known.entries.push([ordinal, entry]);
    this.#seen.set(part.realPath, known);
  }

  /** Moves each container whose parts are all done; `each` hears every part's entry and the result. */
  async move(
    folder: string | undefined,
    cwd: string,
    each: (part: PartOf, result: MoveResult, entries: Array<[number, ReportEntry]>) => void,
  ): Promise<void> {
    if (folder === undefined) return;
    for (const { part, done, entries } of this.#seen.values()) {
      if (!done) continue;
      each(part, await moveInto(containerPath(part), folder, part.rel ?? part.file, cwd, part.read), entries);
    }
  }
}
