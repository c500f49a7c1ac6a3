/**
 * --move-done for the parts of an input file (src/inputs/: a zip's members, a mail's
 * attachments): the input file itself moves, once every part of it that is a document is done.
 * One part still pending, failed or unsent keeps it where it is, parts and all, for the next run
 * (which pays only for what is not done). --move-failed moves no container: its done parts would
 * go with it.
 */
import { containerPath, type PartOf } from '../../inputs/part.ts';
import { inert } from '../../inert.ts';
import type { ReportEntry } from '../summary.ts';
import { type MoveResult, moveInto } from './move.ts';

/** The parts of each container met in the plan, by its real path, and whether all are done. */
export class Containers {
  readonly #seen = new Map<
    string,
    { part: PartOf; done: boolean; entries: Array<[number, ReportEntry]>; notDone?: ReportEntry }
  >();

  /** A part's entry; `done`: it goes to the done folder. */
  add(part: PartOf, ordinal: number, entry: ReportEntry | undefined, done: boolean): void {
    const known = this.#seen.get(part.realPath) ?? { part, done: true, entries: [] };
    known.done &&= done && entry !== undefined;
    if (!done && entry !== undefined) known.notDone ??= entry;
    if (entry !== undefined) known.entries.push([ordinal, entry]);
    this.#seen.set(part.realPath, known);
  }

  /**
   * Moves each container whose parts are all done; `each` hears every part's entry and the
   * result; `kept`, a container that stays, and the first of its parts that is not done.
   */
  async move(
    folder: string | undefined,
    cwd: string,
    each: (part: PartOf, result: MoveResult, entries: Array<[number, ReportEntry]>) => void,
    kept: (part: PartOf, notDone: ReportEntry) => void = () => {},
  ): Promise<void> {
    if (folder === undefined) return;
    for (const { part, done, entries, notDone } of this.#seen.values()) {
      if (!done) {
        if (notDone !== undefined) kept(part, notDone);
        continue;
      }
      each(part, await moveInto(containerPath(part), folder, part.rel ?? part.file, cwd, part.read), entries);
    }
  }
}

/** Why a container stays in its folder: the first of its parts that is not done (a refused member, a failure, one pending). */
export function keptLine(container: string, notDone: ReportEntry): string {
  const why = notDone.error ?? notDone.outcome;
  return `${inert(container)}: left in place, not moved: its part ${inert(notDone.file)} is not done (${inert(why)})`;
}
