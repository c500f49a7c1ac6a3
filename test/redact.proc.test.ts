import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterEach, describe, expect } from 'vitest';
import { it } from './helpers/fixtures.ts';
import { checkApiKey } from '../src/config/settings.ts';
import { forgetSecrets, redact, redactUrl, rememberSecret } from '../src/redact.ts';
import { CLI, cleanEnv, tempDir } from './helpers/cli.ts';
import { journalText } from './helpers/journal.ts';

/** Secrets are redacted by parsing and by their known value, not by their shape. */

afterEach(() => forgetSecrets());

describe('URLs: the userinfo removed whole, where the URL parser says it ends', () => {
  it('a password holding "@" leaves nothing of itself (was "extract:***@PW@host")', () => {
    const shown = redactUrl('journal at postgres://extract:Sekr3t@PW@db.example:5432/jobs, retrying');
    expect(shown).toBe('journal at postgres://***@db.example:5432/jobs, retrying');
    expect(shown).not.toMatch(/Sekr3t|PW@/);
  });

  it('any scheme, percent-encoded passwords, a user name alone, and password= parameters', () => {
    expect(redact('postgres://user:p%40ss@db:5432/x and postgresql://u:abc@h/y?sslmode=require&password=zz')).toBe(
      'postgres://***@db:5432/x and postgresql://***@h/y?sslmode=require&password=***',
    );
    expect(redact('https://ghp_tokenAsUser@git.example/repo')).toBe('https://***@git.example/repo');
    expect(redact('postgres://db:5432/x?sslpassword=k')).toBe('postgres://db:5432/x?sslpassword=***');
    expect(redact('see https://example.com/a@b and postgres://h/db')).toBe(
      'see https://example.com/a@b and postgres://h/db',
    );
  });

  it('a URL the parser refuses loses everything up to its last "@"', () => {
    // An unencoded "/" in the password ends the authority early: the parser sees host "u", port "pa".
    const shown = redactUrl('postgres://u:pa/ss@host/db');
    expect(shown).toBe('postgres://***@host/db');
    expect(shown).not.toContain('ss@');
  });
});

describe('API keys: by their known value, whatever their characters', () => {
  const KEY = 'ext_live+SECRETPART/more.tail~x==';

  it('a remembered key is removed whole, as written and percent-encoded (was "ext_***+SECRETPART")', () => {
    rememberSecret(KEY);
    const echoed = `unknown key ${KEY} (sent as ${encodeURIComponent(KEY)})`;
    const shown = redact(echoed);
    expect(shown).toBe('unknown key ext_*** (sent as ext_***)');
    expect(shown).not.toMatch(/SECRETPART|more\.tail/);
  });

  it('a key this process never saw is still removed by the bearer-token shape', () => {
    expect(redact(`header was ${KEY}; done`)).toBe('header was ext_***; done');
  });

  it("keys outside a bearer token's characters are refused at input, never echoed", () => {
    for (const bad of ['ext_abc def', 'ext_abc,def', 'ext_abc"def', 'ext_abc\tdef', 'ext_abcé', 'ext_a=b']) {
      expect(() => checkApiKey(bad, 'EXTRACT_API_KEY')).toThrow(/holds a character no key has/);
      try {
        checkApiKey(bad, 'EXTRACT_API_KEY');
      } catch (err) {
        expect(String(err)).not.toContain(bad);
      }
    }
    expect(checkApiKey(KEY, 'x')).toBe(KEY);
  });
});

describe('a service that echoes the key back', () => {
  it('the key appears on no stderr line, in no report and in no journal', async ({ httpServer }) => {
    const KEY = 'ext_live+SECRETPART/more.tail~x==';
    const service = await httpServer((req, res) => {
      const key = String(req.headers.authorization ?? '').replace(/^Bearer /, '');
      // A real service's error body naming the key it was given, in a JSON message and raw.
      res.writeHead(401, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          error: { code: 'unauthorized', message: `unknown API key ${key} for ${encodeURIComponent(key)}` },
        }),
      );
    });
    const dir = tempDir();
    writeFileSync(join(dir, 'a.pdf'), '%PDF-1.4\n%%EOF\n');
    const state = join(dir, '.state');
    const r = await execa(process.execPath, [CLI, '--report', 'report.json', '-o', 'out.jsonl', 'a.pdf'], {
      cwd: dir,
      env: cleanEnv({ EXTRACT_API_KEY: KEY, EXTRACT_BASE_URL: service.url, XDG_STATE_HOME: state }),
      extendEnv: false,
      reject: false,
    });
    expect(r.exitCode).not.toBe(0);
    expect(r.stderr).toContain('unknown API key ext_***');
    const written = [r.stdout, r.stderr, readFileSync(join(dir, 'report.json'), 'utf8')];
    for (const file of readdirSync(join(state, 'extract', 'journals'))) {
      if (file.endsWith('.sqlite')) written.push(journalText(join(state, 'extract', 'journals', file)));
    }
    for (const text of written) {
      expect(text).not.toContain('SECRETPART');
      expect(text).not.toContain(encodeURIComponent('SECRETPART/more'));
    }
  });
});
