import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** A journal line as the tests read it: any fact, fields checked where a test needs them. */
export type Fact = Record<string, unknown>;

/**
 * The journal's lines, parsed. A crash mid-write can leave one torn line; the next run starts
 * on a fresh line after it, so a torn line may sit in the middle. Returns them counted. A
 * journal not written yet has no lines.
 */
export function readJournalLines(path: string): { facts: Fact[]; torn: number } {
  const facts: Fact[] = [];
  let torn = 0;
  if (!existsSync(path)) return { facts, torn };
  for (const line of readFileSync(path, 'utf8').split('\n')) {
    if (line.trim() === '') continue;
    try {
      facts.push(JSON.parse(line) as Fact);
    } catch {
      torn++;
    }
  }
  return { facts, torn };
}

/** The facts of the journal a run in `cwd` keeps by default (.extract-state.jsonl), torn lines skipped. */
export function journalFacts(cwd: string): Fact[] {
  return readJournalLines(join(cwd, '.extract-state.jsonl')).facts;
}
