import { Writable } from 'node:stream';

/**
 * The records on stdout under GitHub Actions. They are data, written exactly; but the runner
 * reads stdout for workflow commands too, and a value holding a line break then `::add-mask::`
 * (a CSV cell, a name in the dry run's plan) or `##[` anywhere would be one. So the first time
 * stdout is about to carry a line the runner would read as a command, a `::stop-commands::TOKEN`
 * line goes before it, and `::TOKEN::` ends the fence once the records are written (closeFence),
 * before extract's own annotations. The token is random, so no record can end the fence; output
 * that never holds such a line gets no fence at all (a reader of stdout sees the records alone).
 *
 * Whether a line is a command is known only once it is whole (`:` then `:` may come in two
 * writes, `##[` late in a line), and the fence must come before the line: so text is passed on a
 * whole line at a time, and a line longer than HOLD_MAX is fenced without waiting for its end.
 */
const HOLD_MAX = 64 * 1024;

class FencedStdout extends Writable {
  readonly #out: Writable;
  readonly #token: string;
  #open = false;
  /** The start of a line not yet ended: held until its end decides. */
  #held = '';
  /** Whether what was passed on so far ends a line (or nothing was passed on). */
  #atLineStart = true;

  constructor(out: Writable, token: string) {
    super({ decodeStrings: false });
    this.#out = out;
    this.#token = token;
    // Whoever writes to stdout sees its failures (a reader that went away: EPIPE) as before.
    out.on('error', (err) => this.destroy(err));
    // As on process.stdout itself (cli/log-streams.ts): a reader gone between writes is no crash.
    this.on('error', () => {});
  }

  override _write(chunk: string | Buffer, _encoding: BufferEncoding, done: (error?: Error | null) => void): void {
    const text = this.#held + (typeof chunk === 'string' ? chunk : chunk.toString('utf8'));
    const end = Math.max(text.lastIndexOf('\n'), text.lastIndexOf('\r')) + 1;
    const long = text.length - end > HOLD_MAX;
    this.#held = long ? '' : text.slice(end);
    this.#pass(long ? text : text.slice(0, end), long, done);
  }

  /** Passes `text` (whole lines, unless `force`) on, behind the fence's start when it needs one. */
  #pass(text: string, force: boolean, done: (error?: Error | null) => void): void {
    if (text === '') {
      done();
      return;
    }
    const fence = !this.#open && (force || isCommand(text)) ? `::stop-commands::${this.#token}\n` : '';
    if (fence !== '') this.#open = true;
    this.#atLineStart = /[\r\n]$/.test(text);
    this.#out.write(fence + text, (err) => done(err ?? null));
  }

  /** The last line, if it was never ended, and the fence's end, when one was opened. */
  async close(): Promise<void> {
    if (this.destroyed || this.#out.destroyed) return;
    // Behind every write before this one: the fence's end must not pass a record still queued.
    await new Promise<void>((resolve) => this.write('', () => resolve()));
    if (this.destroyed || this.#out.destroyed) return;
    const held = this.#held;
    this.#held = '';
    await new Promise<void>((resolve) => this.#pass(held, false, () => resolve()));
    if (!this.#open) return;
    this.#open = false;
    const lead = this.#atLineStart ? '' : '\n';
    await new Promise<void>((resolve) => this.#out.write(`${lead}::${this.#token}::\n`, () => resolve()));
  }
}

/** Whether a line of `text` is one the runner reads as a command: `::` first (after blanks), or `##[` anywhere. */
function isCommand(text: string): boolean {
  return text.split(/\r\n|\r|\n/).some((line) => line.trimStart().startsWith('::') || line.includes('##['));
}

/** stdout as a run under GitHub Actions writes it (FencedStdout). */
export function fencedStdout(out: Writable, token: string): Writable {
  return new FencedStdout(out, token);
}

/** Ends stdout's fence, if `out` is fenced: what it holds is passed on, then the fence's end. */
export async function closeFence(out: Writable): Promise<void> {
  if (out instanceof FencedStdout) await out.close();
}
