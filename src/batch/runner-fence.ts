import { Writable } from 'node:stream';

/**
 * The records on stdout under GitHub Actions. They are data, written exactly; but the runner
 * reads stdout for workflow commands too, and a value holding a line break then `::add-mask::`
 * (a CSV cell, a name in the dry run's plan) or `##[` anywhere would be one. So the first time
 * stdout is about to carry a line the runner would read as a command, a `::stop-commands::TOKEN`
 * line goes before it, and `::TOKEN::` ends the fence once the records are written (closeFence),
 * before extract's own annotations. The token is random, so no record can end the fence; output
 * that never holds such a line gets no fence at all (a reader of stdout sees the records alone).
 */
class FencedStdout extends Writable {
  readonly #out: Writable;
  readonly #token: string;
  #open = false;
  /** Whether the text written so far ends inside a line that is, so far, blank (a command may still begin). */
  #blank = true;
  /** Colons the current line starts with after its leading blanks (a `::` split across writes). */
  #colons = 0;
  /** The last two characters written: a `##[` split across writes. */
  #tail = '';

  constructor(out: Writable, token: string) {
    super({ decodeStrings: false });
    this.#out = out;
    this.#token = token;
    // Whoever writes to stdout sees its failures (a reader that went away: EPIPE) as before.
    out.on('error', (err) => this.destroy(err));
  }

  override _write(chunk: string | Buffer, _encoding: BufferEncoding, done: (error?: Error | null) => void): void {
    const text = typeof chunk === 'string' ? chunk : chunk.toString('utf8');
    const fence = !this.#open && this.#command(text) ? `::stop-commands::${this.#token}\n` : '';
    if (fence !== '') this.#open = true;
    this.#out.write(fence + text, (err) => done(err ?? null));
  }

  /** Whether `text`, after what was written before it, holds a line the runner reads as a command. */
  #command(text: string): boolean {
    const joined = this.#tail + text;
    this.#tail = joined.slice(-2);
    if (joined.includes('##[')) return true;
    let found = false;
    for (const c of text) {
      if (c === '\n' || c === '\r') {
        this.#blank = true;
        this.#colons = 0;
      } else if (this.#blank && !/\s/.test(c)) {
        if (c === ':' && ++this.#colons === 2) found = true;
        if (c !== ':' || this.#colons === 2) this.#blank = false;
      }
    }
    return found;
  }

  /** The fence's end, when one was opened: every record is written by now. */
  async close(): Promise<void> {
    if (!this.#open || this.#out.destroyed) return;
    this.#open = false;
    const lead = this.#tail === '' || /[\r\n]$/.test(this.#tail) ? '' : '\n';
    await new Promise<void>((resolve) => this.#out.write(`${lead}::${this.#token}::\n`, () => resolve()));
  }
}

/** stdout as a run under GitHub Actions writes it (FencedStdout). */
export function fencedStdout(out: Writable, token: string): Writable {
  return new FencedStdout(out, token);
}

/** Ends stdout's fence, if `out` is fenced and one was opened. */
export async function closeFence(out: Writable): Promise<void> {
  if (out instanceof FencedStdout) await out.close();
}
