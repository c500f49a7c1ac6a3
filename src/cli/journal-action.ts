import { parseStateSpec } from '../journal/state/index.ts';
import { compactJournal } from '../journal/state/compact.ts';
import type { Cli } from './cli-context.ts';
import type { CompactValues } from '../flags/batch.ts';
import { journalOf } from './status-action.ts';
import { stderrLog, verbosityOf } from './verbosity.ts';

/** Glue between `extract journal compact` and compactJournal: which journal, process streams. */
export async function compactFromCli(_args: [], flags: CompactValues, { env }: Cli): Promise<number> {
  const state = await journalOf(flags.state, env);
  const done = await compactJournal(parseStateSpec(state, process.cwd()), {
    log: stderrLog(verbosityOf(flags)),
  });
  if (flags.json) {
    // snake_case, as every JSON the CLI prints (the report's keys).
    const json = {
      journal: done.journal,
      documents: done.documents,
      facts_before: done.factsBefore,
      facts_after: done.factsAfter,
      bytes_before: done.bytesBefore,
      bytes_after: done.bytesAfter,
    };
    process.stdout.write(`${JSON.stringify(json)}\n`);
  } else {
    const perDocument = (bytes: number) => (done.documents === 0 ? 0 : Math.round(bytes / done.documents));
    process.stdout.write(
      `compacted ${done.journal}: ${done.documents} documents, ${done.factsBefore} facts -> ${done.factsAfter}, ` +
        `${done.bytesBefore} bytes -> ${done.bytesAfter} (${perDocument(done.bytesBefore)} -> ${perDocument(done.bytesAfter)} bytes a document)\n`,
    );
  }
  return 0;
}
