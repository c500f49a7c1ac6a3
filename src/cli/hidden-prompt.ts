import { ExtractError } from '../errors.ts';

/**
 * Asks for a secret on the terminal without echoing it (as ssh and sudo do): the prompt on
 * stderr, the terminal in raw mode until Enter, one "*" per character typed so a paste shows
 * it arrived. Ctrl-C is an interrupt (exit 130, nothing stored); Ctrl-D on an empty line, or a
 * closed terminal, gives what was typed.
 */
export function hiddenPrompt(prompt: string): Promise<string> {
  const input = process.stdin;
  const out = process.stderr;
  return new Promise((resolve, reject) => {
    let value = '';
    const finish = (): void => {
      input.setRawMode(false);
      input.pause();
      input.off('data', onData);
      input.off('end', done);
      out.write('\n');
    };
    const done = (): void => {
      finish();
      resolve(value);
    };
    const onData = (chunk: Buffer): void => {
      for (const ch of chunk.toString('utf8')) {
        if (ch === '\r' || ch === '\n' || (ch === '\u0004' && value === '')) {
          done();
          return;
        }
        if (ch === '\u0003') {
          finish();
          reject(new ExtractError('interrupted', 'interrupted: nothing was stored'));
          return;
        }
        if (ch === '\u007f' || ch === '\b') {
          if (value.length > 0) {
            value = [...value].slice(0, -1).join('');
            out.write('\b \b');
          }
        } else if (ch >= ' ') {
          value += ch;
          out.write('*');
        }
      }
    };
    // Raw (no echo) before the prompt: what is typed once the prompt shows is never echoed.
    input.setRawMode(true);
    out.write(prompt);
    input.resume();
    input.on('data', onData);
    input.on('end', done);
  });
}
