import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { closeFence, fencedStdout } from '../../src/batch/finish/runner-fence.ts';
import { runnerCommands } from '../helpers/runner-commands.ts';

/** Writes `chunks` through a fenced stream, ends the fence, and returns what reached the real one. */
async function through(chunks: string[]): Promise<string> {
  const out = new PassThrough();
  let text = '';
  out.on('data', (c: Buffer) => {
    text += c.toString('utf8');
  });
  const fenced = fencedStdout(out, 'T0K3N');
  for (const chunk of chunks) await new Promise<void>((resolve) => fenced.write(chunk, () => resolve()));
  await closeFence(fenced);
  await closeFence(fenced);
  return text;
}

describe('the records on stdout under GitHub Actions', () => {
  it('are written exactly, with no fence, when no line would be a command', async () => {
    const records = ['file,total\n', '"in/a.pdf",12:30\n', '"in/b.pdf","x :: y # [z]"\n'];
    expect(await through(records)).toBe(records.join(''));
  });

  it('are fenced, exactly, from the first line that would be a command, whichever write splits it', async () => {
    const cases = [
      ['a,"\n::error ::x"\n'],
      ['a,"\n', ':', ':error ::x"\n'],
      ['a,"\n  \t', '::add-mask::x"\n'],
      ['a,"x #', '#', '[set-output name=ok;]1"\n'],
      ['a,"\r::stop-commands::tok"\n', 'b\n'],
    ];
    for (const chunks of cases) {
      const text = await through(chunks);
      expect(text.replace('::stop-commands::T0K3N\n', '').replace('::T0K3N::\n', '')).toBe(chunks.join(''));
      expect(runnerCommands(text).map((c) => c.name)).toEqual(['stop-commands', 'T0K3N']);
    }
  });

  it('ends the fence on a line of its own when the output did not end one', async () => {
    const text = await through(['\n::error ::x']);
    expect(text.endsWith('\n::error ::x\n::T0K3N::\n')).toBe(true);
  });

  it('ends the fence after every record written before, even those still queued', async () => {
    const out = new PassThrough({ highWaterMark: 1 });
    let text = '';
    const fenced = fencedStdout(out, 'T0K3N');
    for (let i = 0; i < 50; i++) fenced.write(`r${i},"\n::error ::${i}"\n`);
    const closed = closeFence(fenced);
    out.on('data', (c: Buffer) => {
      text += c.toString('utf8');
    });
    await closed;
    expect(text.endsWith('r49,"\n::error ::49"\n::T0K3N::\n')).toBe(true);
    expect(runnerCommands(text).map((c) => c.name)).toEqual(['stop-commands', 'T0K3N']);
  });

  it("passes the reader's going away (EPIPE) to whoever writes", async () => {
    const out = new PassThrough();
    const fenced = fencedStdout(out, 'T0K3N');
    const failed = new Promise<NodeJS.ErrnoException>((resolve) => fenced.on('error', resolve));
    out.emit('error', Object.assign(new Error('write EPIPE'), { code: 'EPIPE' }));
    expect((await failed).code).toBe('EPIPE');
    expect(fenced.destroyed).toBe(true);
  });
});
