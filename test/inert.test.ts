import { describe, expect, it } from 'vitest';
import { inert, SERVICE_TEXT_MAX } from '../src/inert.ts';
import { runnerCommands } from './helpers/runner-commands.ts';

describe('inert: text of others in a line of ours', () => {
  it('escapes line breaks, terminal sequences, C1 controls and line separators, visibly', () => {
    expect(inert('a\nb\rc\u001b[2Jd\u0085e\u2028f\u007f')).toBe('a\\x0ab\\x0dc\\x1b[2Jd\\x85e\\u2028f\\x7f');
  });

  it("escapes the runner's older command prefix anywhere, and leaves ordinary text alone", () => {
    expect(inert('x ##[set-output name=ok;]1')).toBe('x ##\\x5bset-output name=ok;]1');
    expect(inert('Rechnung Müller: 12:30, #3 [draft]')).toBe('Rechnung Müller: 12:30, #3 [draft]');
  });

  it('makes any text, behind a prefix of ours, a line the runner reads no command in', () => {
    const hostile = ['\n::add-mask::x', '\r##[set-output name=ok;]1', '\r\n::stop-commands::tok', '\u000b::error ::x'];
    for (const text of hostile) expect(runnerCommands(`info  in/${inert(text)}.pdf: failed`)).toEqual([]);
  });

  it('cuts text past the cap and says how much more there was', () => {
    const shown = inert('x'.repeat(3 * 1024 * 1024), SERVICE_TEXT_MAX);
    expect(shown).toBe(`${'x'.repeat(SERVICE_TEXT_MAX)}… (${3 * 1024 * 1024 - SERVICE_TEXT_MAX} more characters)`);
    expect(inert('short', SERVICE_TEXT_MAX)).toBe('short');
  });
});
