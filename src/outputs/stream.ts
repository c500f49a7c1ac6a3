import { Writable } from 'node:stream';
import { jsonLine } from './json.ts';
import type { DocumentRecord } from './record.ts';

export type StreamWriter = {
  /** Writes one record as a JSON line; resolves when the stream can take more (backpressure). */
  write(record: DocumentRecord): Promise<void>;
  /** True once the reader went away (`extract ... | head`); later writes are dropped. */
  readonly closed: boolean;
};

/**
 * JSON Lines to stdout as documents finish. A reader that exits early (EPIPE) must not
 * crash the run: results are already in the journal, and the run goes on to its summary.
 */
export function createStreamWriter(out: Writable): StreamWriter {
  let closed = false;
  let failure: Error | undefined;
  out.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code === 'EPIPE' || err.code === 'ERR_STREAM_DESTROYED') closed = true;
    else failure = err;
  });
  return {
    get closed() {
      return closed;
    },
    async write(record) {
      if (failure !== undefined) throw failure;
      if (closed || out.destroyed) {
        closed = true;
        return;
      }
      if (!out.write(jsonLine(record))) await drained(out);
    },
  };
}

/** Resolves when the stream drains, closes or fails; the 'error' listener above reports failures. */
export function drained(out: Writable): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      out.off('drain', done);
      out.off('close', done);
      out.off('error', done);
      resolve();
    };
    out.on('drain', done);
    out.on('close', done);
    out.on('error', done);
  });
}

/** A stream that takes every write and keeps nothing: where output nobody reads goes. */
export function discarded(): Writable {
  return new Writable({
    write(_chunk, _encoding, done) {
      done();
    },
  });
}
