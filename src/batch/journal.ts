import { open, readFile, type FileHandle } from 'node:fs/promises';
import { z } from 'zod';
import { Results } from '../contract/index.ts';
import { Route } from '../outputs/record.ts';

/**
 * The state journal: an append-only JSON Lines file of facts about documents, each written
 * and flushed to disk the moment it is known, so that a crash at any point loses at most
 * the fact being written. A document is keyed by the sha256 of its content and the target
 * (config's keyFingerprint of base URL and key), so a renamed file is recognised and another parser's key
 * extracts again. The key itself is never written.
 */

const Common = { at: z.string(), sha256: z.string(), target: z.string(), file: z.string() };

/**
 * The extract request as sent, so that a resend after an uncertain outcome (a crash, a
 * dropped connection) is the same request under the same Idempotency-Key: a service that
 * honours the key answers it with the first document and charges nothing more. The
 * storage-path shape resends the same storage path rather than uploading again.
 */
export const SentRequest = z.object({
  idempotency_key: z.string(),
  file_name: z.string(),
  file_type: z.string(),
  storage_path: z.string().optional(),
});
export type SentRequest = z.infer<typeof SentRequest>;

export const JournalFact = z.discriminatedUnion('fact', [
  /**
   * An extract request is about to be sent. Without a later fact, a crash (SIGKILL, power)
   * happened while it was in flight: the document may have been charged, and there is no
   * document_id to look it up, so a rerun reports it rather than paying twice; with
   * --retry-failed it resends `request` unchanged. (`request` is absent in older journals.)
   */
  z.object({ fact: z.literal('sending'), ...Common, route: Route, request: SentRequest.optional() }),
  /** The extract request was answered without creating a document (402, 503...): nothing was charged. */
  z.object({ fact: z.literal('unsent'), ...Common, route: Route }),
  /** The service returned a document_id: from now on the document is paid for. */
  z.object({ fact: z.literal('submitted'), ...Common, route: Route, document_id: z.string() }),
  z.object({
    fact: z.literal('completed'),
    ...Common,
    route: Route,
    document_id: z.string(),
    page_count: z.number().int().nonnegative().nullable(),
    results: Results,
  }),
  z.object({
    fact: z.literal('failed'),
    ...Common,
    route: Route.nullable(),
    document_id: z.string().nullable(),
    reason: z.string(),
    retryable: z.boolean(),
    /** Set when the extract request may have reached the service unanswered: --retry-failed resends it unchanged. */
    request: SentRequest.optional(),
  }),
  /** --fresh: facts written before this line are ignored. */
  z.object({ fact: z.literal('reset'), at: z.string() }),
]);
export type JournalFact = z.infer<typeof JournalFact>;
export type DocumentFact = Exclude<JournalFact, { fact: 'reset' }>;

/** What an earlier run knew of one document. */
export type KnownState = Exclude<DocumentFact, { fact: 'unsent' }>;

export function stateKey(sha256: string, target: string): string {
  return `${target}:${sha256}`;
}

export type Replay = {
  /** The latest fact per document (stateKey). */
  known: Map<string, KnownState>;
  /** Lines that could not be read (a torn last line after a crash is expected). */
  skipped: number;
  /** Whether the file ends mid-line; the next append starts on a fresh line. */
  torn: boolean;
};

/** Replays the journal text: the latest fact of each document wins, a reset forgets all before it. */
export function replayJournal(text: string): Replay {
  const replay = replayer();
  const parsed = parseJournal(text);
  for (const fact of parsed.facts) replay.apply(fact);
  return { known: replay.known, skipped: parsed.skipped, torn: parsed.torn };
}

/** The facts of the journal text in order; lines that cannot be read are counted, not fatal. */
export function parseJournal(text: string): { facts: JournalFact[]; skipped: number; torn: boolean } {
  const facts: JournalFact[] = [];
  let skipped = 0;
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    let parsed: ReturnType<typeof JournalFact.safeParse>;
    try {
      parsed = JournalFact.safeParse(JSON.parse(line));
    } catch {
      skipped++;
      continue;
    }
    if (!parsed.success) {
      skipped++;
      continue;
    }
    facts.push(parsed.data);
  }
  return { facts, skipped, torn: text.length > 0 && !text.endsWith('\n') };
}

/**
 * The replay, one fact at a time, shared by every journal backend (the JSONL file,
 * PostgreSQL) so that they agree on what a sequence of facts means. Whatever a rule needs to
 * remember beyond the latest state of each document lives in here.
 */
export function replayer(): { known: Map<string, KnownState>; apply(fact: JournalFact): void } {
  const known = new Map<string, KnownState>();
  return {
    known,
    apply(fact) {
      if (fact.fact === 'reset') known.clear();
      else if (fact.fact === 'unsent') known.delete(stateKey(fact.sha256, fact.target));
      else known.set(stateKey(fact.sha256, fact.target), fact);
    },
  };
}

/** The document a fact is about (undefined for a batch-wide fact such as reset). */
export function factKey(fact: JournalFact): string | undefined {
  return fact.fact === 'reset' ? undefined : stateKey(fact.sha256, fact.target);
}

export async function readJournal(path: string): Promise<Replay> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    if (typeof err === 'object' && err !== null && Reflect.get(err, 'code') === 'ENOENT') return { known: new Map(), skipped: 0, torn: false };
    throw err;
  }
  return replayJournal(text);
}

/** The writing side. Appends are serialised: a line is written whole, then fsync'd. */
export interface JournalWriter {
  append(fact: JournalFact): Promise<void>;
  close(): Promise<void>;
}

export async function openJournal(path: string, torn: boolean): Promise<JournalWriter> {
  const handle: FileHandle = await open(path, 'a', 0o600);
  let chain: Promise<void> = torn ? handle.write('\n').then(() => undefined) : Promise.resolve();
  return {
    append(fact) {
      const line = `${JSON.stringify(fact)}\n`;
      chain = chain.then(async () => {
        await handle.write(line);
        await handle.datasync();
      });
      return chain;
    },
    async close() {
      await chain.catch(() => undefined);
      await handle.close();
    },
  };
}

/** For --no-state and --dry-run. */
export const NO_JOURNAL: JournalWriter = { append: async () => {}, close: async () => {} };
