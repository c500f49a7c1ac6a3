import {
  describeZodErrorInline,
  jsonDepthOver,
  MAX_PAYLOAD_DEPTH,
  MISSING_IS_MISSING,
  WebhookPayload,
} from '../contract/index.ts';
import type { MissingMarker } from '../outputs/missing-marker.ts';
import type { Inbox, InboxRow } from './inbox.ts';
import type { Logger } from './log.ts';
import { fieldIdKey, nullFields, recordOf } from './records.ts';
import type { RecordSink } from './sink.ts';
import { eventText } from './event-text.ts';

/**
 * Drains the inbox after the replies have gone: parses each acknowledged event, claims its
 * document_id (or finds it a duplicate), then hands the new documents to the outputs. One
 * drain runs at a time; events that arrive meanwhile are taken by the next pass, so a burst
 * becomes a few batches, and a whole-file output is rewritten once per batch, not per event.
 */
export type Worker = {
  /** Asks for a drain soon; cheap to call on every acknowledgement. */
  kick(): void;
  /** Resolves when nothing acknowledged is left to process or write. */
  idle(): Promise<void>;
  /** Stops scheduling new passes once the current one (and what is queued) is done. */
  stop(): Promise<void>;
};

export type WorkerCounts = { new: number; duplicates: number; kept: number };

/** What a run has said once and does not repeat. */
type Said = { fieldIds: boolean };

/** What a pass holds at once by default: events are taken up to this many bytes of bodies, not by count. */
const WORKER_BATCH_BYTES = 16 * 1024 * 1024;
/** A pass settles up to this many budgets of events between two writes of the outputs. */
const BATCHES_PER_WRITE = 64;
/**
 * A pass parses and settles at most this many bytes of events before it lets the event loop
 * answer the senders waiting: acknowledgements stay fast whatever the events' width or depth.
 */
const CHUNK_BYTES = 64 * 1024;
/** After a failed write (disk full, output removed), wait this long before trying again. */
const RETRY_MS = 1000;

export function createWorker(deps: {
  inbox: Inbox;
  sink: RecordSink;
  logger: Logger;
  now: () => Date;
  counts: WorkerCounts;
  delayMs: number;
  /** Least time between two passes; lets events pile up into one batch when each pass rewrites a whole file. */
  spacingMs: number;
  /** A pass takes at most this many bytes of event bodies (at least one event). */
  batchBytes?: number | undefined;
  /** A value exactly this text is missing: null in the record, listed for review. */
  missingMarker: MissingMarker;
}): Worker {
  const { inbox, sink, logger, now, counts, delayMs, spacingMs, missingMarker } = deps;
  const batchBytes = deps.batchBytes ?? WORKER_BATCH_BYTES;
  let lastPassEnd = Number.NEGATIVE_INFINITY;
  let running: Promise<void> | undefined;
  let again = false;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let waiters: (() => void)[] = [];
  const said: Said = { fieldIds: false };

  const settleWaiters = (): void => {
    const list = waiters;
    waiters = [];
    for (const resolve of list) resolve();
  };

  const pass = async (): Promise<void> => {
    for (;;) {
      // Events are taken a budget of bytes at a time and settled; the outputs are written once
      // for up to BATCHES_PER_WRITE budgets (a whole-file output is not rewritten per budget).
      let taken = 0;
      for (let batch = 0; batch < BATCHES_PER_WRITE; batch++) {
        const rows = inbox.unprocessed(batchBytes);
        if (rows.length === 0) break;
        taken += rows.length;
        for (let i = 0; i < rows.length; ) {
          let bytes = 0;
          let end = i;
          while (end < rows.length && (end === i || bytes + rows[end]!.body.length <= CHUNK_BYTES))
            bytes += rows[end++]!.body.length;
          _process(rows.slice(i, end), { inbox, logger, now, counts, said, marker: missingMarker });
          i = end;
          await new Promise<void>((resolve) => setImmediate(resolve));
        }
      }
      await sink.write(inbox);
      if (taken === 0) return;
    }
  };

  const run = (): void => {
    if (running) {
      again = true;
      return;
    }
    again = false;
    running = pass()
      .catch((err: unknown) => {
        logger({
          type: 'error',
          message: `could not write the outputs (${err instanceof Error ? err.message : String(err)}); retrying in ${RETRY_MS / 1000} s, the events are safe in the inbox`,
        });
        if (!stopped) schedule(RETRY_MS);
      })
      .finally(() => {
        running = undefined;
        lastPassEnd = performance.now();
        if (again) run();
        else if (timer === undefined) settleWaiters();
      });
  };

  const schedule = (ms: number): void => {
    if (timer !== undefined) return;
    timer = setTimeout(() => {
      timer = undefined;
      run();
    }, ms);
  };

  return {
    kick() {
      if (stopped) return;
      const wait = Math.max(delayMs, lastPassEnd + spacingMs - performance.now());
      if (wait > 0) schedule(wait);
      else setImmediate(run);
    },
    idle() {
      if (running === undefined && timer === undefined && inbox.unprocessed(0).length === 0) return Promise.resolve();
      return new Promise((resolve) => {
        waiters.push(resolve);
        if (running === undefined && timer === undefined) run();
      });
    },
    async stop() {
      stopped = true;
      if (timer !== undefined) {
        clearTimeout(timer);
        timer = undefined;
        // What was acknowledged but held back is processed now, before the inbox closes.
        run();
      }
      while (running) await running;
      settleWaiters();
    },
  };
}

function _process(
  rows: readonly InboxRow[],
  ctx: { inbox: Inbox; logger: Logger; now: () => Date; counts: WorkerCounts; said: Said; marker: MissingMarker },
): void {
  const { inbox, logger, now, counts, said, marker } = ctx;
  const quarantined = new Set<number>();
  const parsed = rows.map((row) => {
    // The routes acknowledge any JSON object (the deployed sender never retries a 4xx); here it
    // is read against the contract, and what is not a document.processed is kept, not written.
    // Whatever throws (an event an older version acknowledged, nested 2,000 deep, say) is
    // quarantined: kept in the inbox, logged, and the next events go on.
    let payload: WebhookPayload | undefined;
    let claim: { record: ReturnType<typeof recordOf>; nullFields: string[] } | undefined;
    let kept: { documentId: string; reason: string } | undefined;
    try {
      const text = eventText(row.body);
      if (jsonDepthOver(text, MAX_PAYLOAD_DEPTH))
        throw new RangeError(`nested deeper than ${MAX_PAYLOAD_DEPTH} levels`);
      const json: unknown = JSON.parse(text);
      const result = WebhookPayload.safeParse(json, MISSING_IS_MISSING);
      if (result.success) {
        payload = result.data;
        // The review list is of the record as written: the missing marker already null in it.
        const record = recordOf(payload, marker);
        claim = { record, nullFields: nullFields(record.results ?? {}) };
        JSON.stringify(claim); // what the inbox stores: fails here, not in the middle of a batch
      } else {
        kept = { documentId: _documentIdOf(json), reason: describeZodErrorInline(result.error, 3) };
      }
    } catch (err) {
      logger({ type: 'quarantined', inbox_seq: row.seq, reason: err instanceof Error ? err.message : String(err) });
      quarantined.add(row.seq);
      payload = undefined;
      claim = undefined;
    }
    return { row, payload, claim, kept };
  });
  const outcomes = inbox.settle(
    parsed.map(({ row, claim }) => (claim === undefined ? { seq: row.seq } : { seq: row.seq, claim })),
    now(),
  );
  for (const [i, { row, payload, claim, kept }] of parsed.entries()) {
    const outcome = outcomes[i];
    if (quarantined.has(row.seq)) continue;
    if (kept !== undefined) {
      counts.kept++;
      logger({ type: 'kept', inbox_seq: row.seq, document_id: kept.documentId, reason: kept.reason });
      continue;
    }
    if (payload === undefined || claim === undefined || outcome === undefined || outcome === 'invalid') {
      logger({
        type: 'error',
        message: `inbox event #${row.seq} is not a valid document.processed any more; it is marked invalid and left in the inbox`,
      });
      continue;
    }
    if (outcome === 'new') counts.new++;
    else counts.duplicates++;
    // The first event of a document wins; a later one that says otherwise is worth a word.
    const otherData = outcome === 'duplicate' && inbox.recordText(payload.document_id) !== JSON.stringify(claim.record);
    // A repeat that says nothing new is a row and a count, not another copy of its body: a sender's
    // retries (or anyone's replays) of one large event cannot grow the inbox without bound.
    if (outcome === 'duplicate' && !otherData) inbox.dropBody(row.seq);
    logger({
      type: 'event',
      document_id: payload.document_id,
      parser: payload.parser_name,
      pages: payload.metadata.page_count,
      outcome,
      method: row.method,
      ...(otherData ? { other_data: true, inbox_seq: row.seq } : {}),
    });
    const nulls = outcome === 'new' ? claim.nullFields : [];
    if (nulls.length > 0) {
      logger({
        type: 'review',
        document_id: payload.document_id,
        file_name: payload.metadata.file_name,
        null_fields: nulls,
      });
    }
    if (!said.fieldIds) {
      const key = fieldIdKey(payload.data);
      if (key !== undefined) {
        said.fieldIds = true;
        logger({ type: 'field_ids', document_id: payload.document_id, key });
      }
    }
  }
}

/** The document_id of an event that is not a valid one, if it has one, for the log. */
function _documentIdOf(json: unknown): string {
  if (typeof json !== 'object' || json === null || !('document_id' in json)) return '';
  return typeof json.document_id === 'string' ? json.document_id : '';
}
