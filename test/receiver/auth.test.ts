import { describe, expect } from 'vitest';
import { createAuthenticator } from '../../src/receiver/auth.ts';
import { resolveAuth } from '../../src/cli/listen-action.ts';
import type { ReceiverAuth } from '../../src/receiver/index.ts';
import { it, basic, payload, send } from './helpers.ts';

const TOKEN = 'tok-VERY-secret-42';
const USER = 'hooks';
const PASSWORD = 'pw-VERY-secret-42';

/** Each auth type, the right header, and wrong or missing headers with the reason the log must give. */
const CASES: {
  auth: ReceiverAuth;
  right: string;
  wrong: { header: string | undefined; reason: string; presented?: string }[];
}[] = [
  {
    auth: { type: 'bearer', token: TOKEN },
    right: `Bearer ${TOKEN}`,
    wrong: [
      { header: undefined, reason: 'missing Authorization header' },
      { header: `Basic ${TOKEN}`, reason: 'wrong scheme (expected Bearer)' },
      { header: 'Bearer guess-PRESENTED-1', reason: 'wrong token', presented: 'guess-PRESENTED-1' },
      { header: `Bearer ${TOKEN}x`, reason: 'wrong token' },
    ],
  },
  {
    auth: { type: 'basic', username: USER, password: PASSWORD },
    right: basic(USER, PASSWORD),
    wrong: [
      { header: undefined, reason: 'missing Authorization header' },
      { header: `Bearer ${PASSWORD}`, reason: 'wrong scheme (expected Basic)' },
      { header: basic(USER, 'guess-PRESENTED-2'), reason: 'wrong credentials', presented: 'guess-PRESENTED-2' },
      { header: basic('someone', PASSWORD), reason: 'wrong credentials' },
      { header: 'Basic !!!not-base64', reason: 'malformed Basic credentials' },
    ],
  },
];

describe('listen: authentication', () => {
  for (const { auth, right, wrong } of CASES) {
    it(`listen: ${auth.type} auth answers 401 to missing or wrong credentials, logs the reason, never the secret`, async ({
      receiver,
    }) => {
      const r = await receiver({ auth });
      for (const w of wrong) {
        const res = await send(r.url, payload(), w.header === undefined ? {} : { authorization: w.header });
        expect(res.status, w.reason).toBe(401);
        expect(res.body).toMatchObject({ code: 'unauthorized', error: `unauthorized: ${w.reason}` });
        expect(res.headers.get('www-authenticate')).toMatch(
          new RegExp(`^${auth.type === 'bearer' ? 'Bearer' : 'Basic'} realm=`),
        );
        expect(r.lines.at(-1)).toBe(`<-- 401 POST /webhook: ${w.reason}`);
      }
      const ok = await send(r.url, payload(), { authorization: right });
      expect(ok.status).toBe(200);
      await r.drained();
      expect(r.stats()).toMatchObject({ unauthorized: wrong.length, received: 1 });
      const everything = r.lines.join('\n') + r.stdout();
      for (const secret of [TOKEN, PASSWORD, 'PRESENTED', Buffer.from(`${USER}:${PASSWORD}`).toString('base64')]) {
        expect(everything).not.toContain(secret);
      }
    });
  }

  it('listen: a wrong credential is rejected before the body is read or stored', async ({ receiver }) => {
    const r = await receiver({ auth: { type: 'bearer', token: TOKEN }, maxBodyBytes: 1024 });
    // A body over the limit: without auth first this would be a 413.
    const res = await send(r.url, null, { raw: 'x'.repeat(4096), authorization: 'Bearer nope' });
    expect(res.status).toBe(401);
    await r.drained();
    expect(r.stats()).toMatchObject({ received: 0, rejected: 0, unauthorized: 1 });
  });

  it('listen: the scheme name is case-insensitive, the token is not', async () => {
    const check = createAuthenticator({ type: 'bearer', token: TOKEN });
    expect(check.check(`bearer ${TOKEN}`)).toEqual({ ok: true });
    expect(check.check(`BEARER   ${TOKEN}  `)).toEqual({ ok: true });
    expect(check.check(`Bearer ${TOKEN.toLowerCase()}`)).toEqual({ ok: false, reason: 'wrong token' });
  });

  it('listen: auth none lets every request in', () => {
    expect(createAuthenticator({ type: 'none' }).check(undefined)).toEqual({ ok: true });
  });

  it('listen: a password containing ":" works with basic auth (only the first colon splits)', () => {
    const check = createAuthenticator({ type: 'basic', username: USER, password: 'a:b:c' });
    expect(check.check(basic(USER, 'a:b:c'))).toEqual({ ok: true });
    expect(check.check(basic(USER, 'a:b'))).toEqual({ ok: false, reason: 'wrong credentials' });
  });
});

describe('listen: auth flags', () => {
  const none = {};
  it('listen: --auth follows from the credentials given, the token may come from EXTRACT_LISTEN_TOKEN', () => {
    expect(resolveAuth({}, none)).toBe('generate');
    expect(resolveAuth({ token: 't' }, none)).toEqual({ type: 'bearer', token: 't' });
    expect(resolveAuth({}, { EXTRACT_LISTEN_TOKEN: 'e' })).toEqual({ type: 'bearer', token: 'e' });
    expect(resolveAuth({ auth: 'bearer' }, { EXTRACT_LISTEN_TOKEN: 'e' })).toEqual({ type: 'bearer', token: 'e' });
    expect(resolveAuth({ auth: 'bearer', token: 'flag' }, { EXTRACT_LISTEN_TOKEN: 'e' })).toEqual({
      type: 'bearer',
      token: 'flag',
    });
    expect(resolveAuth({ user: 'u', password: 'p' }, none)).toEqual({ type: 'basic', username: 'u', password: 'p' });
    expect(resolveAuth({ user: 'u' }, { EXTRACT_LISTEN_PASSWORD: 'ep' })).toEqual({
      type: 'basic',
      username: 'u',
      password: 'ep',
    });
    expect(resolveAuth({ auth: 'none' }, { EXTRACT_LISTEN_TOKEN: 'e' })).toEqual({ type: 'none' });
  });

  it('listen: impossible auth combinations are usage errors that say what to do', () => {
    const cases: [Parameters<typeof resolveAuth>[0], RegExp][] = [
      [{ auth: 'bearer' }, /needs a token: set EXTRACT_LISTEN_TOKEN/],
      [{ auth: 'bearer', token: '' }, /needs a token/],
      [{ auth: 'bearer', token: 't', user: 'u' }, /--user and --password are for --auth basic/],
      [{ auth: 'basic', user: 'u' }, /needs --user and a password/],
      [{ auth: 'basic', password: 'p' }, /needs --user and a password/],
      [{ auth: 'basic', user: 'u', password: 'p', token: 't' }, /--token is for --auth bearer/],
      [{ auth: 'basic', user: 'a:b', password: 'p' }, /cannot contain ":"/],
      [{ auth: 'none', token: 't' }, /--auth none takes no credentials/],
      [{ auth: 'digest' }, /unknown --auth "digest": use none, bearer or basic/],
    ];
    for (const [flags, message] of cases) {
      expect(() => resolveAuth(flags, {}), JSON.stringify(flags)).toThrow(message);
      try {
        resolveAuth(flags, {});
      } catch (err) {
        expect(err).toMatchObject({ code: 'usage' });
      }
    }
  });
});
