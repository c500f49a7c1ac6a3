import { mkdirSync, readdirSync, readFileSync, rmSync, statfsSync, statSync, writeFileSync } from 'node:fs';
import type { IncomingMessage, Server } from 'node:http';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, describe, expect } from 'vitest';
import { it } from '../helpers/fixtures.ts';
import { closeAll, type StartHttpServer, startHttpServer } from '../helpers/http-server.ts';
import { RecordSpool } from '../../src/batch/records.ts';
import type { ReportEntry } from '../../src/batch/summary.ts';
import { parseJournal } from '../../src/journal/journal-read.ts';
import { completedRecord } from '../../src/outputs/record.ts';
import { mountTmpfs, tmpfsRefused, unmount } from '../helpers/tmpfs.ts';
import { cleanEnv, stateHomeIn, type TempDir, tempDir } from '../helpers/cli.ts';
import { defaultJournalIn, journalText, readJournalLines } from '../helpers/journal.ts';
import {
  extract,
  FIXTURES,
  KEY,
  fixtureNames,
  readJsonLines,
  reservesBySha,
  serveForFile,
  workDir,
} from './batch-helpers.ts';

/**
 * Nothing charged is ever lost, and a wrong service is named, not
 * ground through. Every service here ignores Idempotency-Key (a stand-in that never heard of
 * it, or the emulator with idempotency_key: false), so each POST extract is a charge.
 */

/** `{"a":{"a":…null…}}` nested `depth` deep, as text: JSON.stringify of it would overflow the stack. */
function nested(depth: number): string {
  return `${'{"a":'.repeat(depth)}null${'}'.repeat(depth)}`;
}

/**
 * A stand-in service that answers every inline extract with a new document (a charge) whose
 * answer it builds with `body(id)`, and every GET of a document the same way. It counts the
 * extract requests: the charges.
 */
async function standIn(httpServer: StartHttpServer, body: (id: string, how: 'extract' | 'get') => string) {
  let charged = 0;
  const server = await httpServer((req: IncomingMessage, res) => {
    req.resume();
    req.on('end', () => {
      const url = req.url ?? '';
      let id: string | undefined;
      const how = req.method === 'POST' ? 'extract' : 'get';
      if (req.method === 'POST' && url === '/api/v1/extract') id = `doc_${++charged}`;
      else id = /^\/api\/v1\/documents\/([^/]+)$/.exec(url)?.[1];
      if (id === undefined) {
        res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"no such route"}');
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end(body(id, how));
    });
  });
  return { url: server.url, charged: () => charged };
}

/** A folder with `n` of the invoice fixtures under in/. */
function fewInvoices(n: number, folder: TempDir = tempDir): string {
  const cwd = folder('extract-lost-');
  mkdirSync(join(cwd, 'in'));
  for (const name of fixtureNames().slice(0, n)) {
    writeFileSync(join(cwd, 'in', name), readFileSync(join(FIXTURES, name)));
  }
  return cwd;
}

/**
 * The emulator without Idempotency-Key, one for the file's tests that need a real service (each
 * counts only its own charges: reservesBySha).
 */
const service = serveForFile({ idempotency_key: false });

function journalOf(path: string) {
  return { ...parseJournal(journalText(path)), lines: readJournalLines(path) };
}

describe('results the client cannot hold are refused, never lost', () => {
  it('results nested 200,000 deep: a clear refusal that keeps each document_id, and the journal says they may be charged', async ({
    httpServer,
  }) => {
    const service = await standIn(
      httpServer,
      (id) =>
        `{"success":true,"parser_id":"par_1","document_id":"${id}","page_count":1,"status":"completed","file_name":"x.pdf","error":null,"results":${nested(200_000)}}`,
    );
    const cwd = fewInvoices(2);
    const run = await extract(cwd, service.url, ['in/', '--route', 'inline', '-o', 'out.jsonl']);
    expect(run.stderr).not.toMatch(/Maximum call stack|unexpected error|\n\s+at /);
    expect(run.exitCode, run.stderr).toBe(1);
    expect(run.stderr).toMatch(/nested deeper than \d+ levels/);
    expect(run.stderr).toMatch(/extract get doc_[12]/);
    expect(service.charged()).toBe(2);

    const records = readJsonLines(readFileSync(join(cwd, 'out.jsonl'), 'utf8'));
    expect(records.map((r) => r.document_id).sort()).toEqual(['doc_1', 'doc_2']);
    expect(records.map((r) => r.page_count)).toEqual([1, 1]);

    const journal = journalOf(defaultJournalIn(cwd));
    expect(journal.skipped).toBe(0);
    const failed = journal.facts.filter((f) => f.fact === 'failed');
    expect(failed.map((f) => (f.fact === 'failed' ? [f.document_id, f.charge] : [])).sort()).toEqual([
      ['doc_1', 'uncertain'],
      ['doc_2', 'uncertain'],
    ]);

    // A plain rerun pays nothing more: the journal knows both documents were charged.
    const rerun = await extract(cwd, service.url, ['in/', '--route', 'inline', '-o', 'out.jsonl']);
    expect(rerun.stderr).not.toMatch(/unexpected error/);
    expect(service.charged()).toBe(2);
  });
});

describe('an inline answer whose page_count is not a number of pages', () => {
  // One run over one document per bad value, each answered with its own (the stand-in numbers
  // its documents in the order they come, and the value follows the number); each asserted alone.
  const CASES = [
    ['1e300', '1e300'],
    ['negative', '-3'],
    ['1.5', '1.5'],
    ['a string', '"3"'],
  ] as const;
  const seen = { stderr: '', charged: 0, cwd: '' };
  // Started once for the cases below, so not a test's fixture: closed when they are done.
  const open = new Set<Server>();
  afterAll(() => closeAll(open));
  it.beforeAll(async ({ fileTempDir }) => {
    const service = await standIn(
      (handler) => startHttpServer(open, handler),
      (id) =>
        `{"success":true,"parser_id":"par_1","document_id":"${id}","status":"completed","file_name":"x.pdf","error":null,"page_count":${CASES[Number(id.slice(4)) - 1]![1]},"results":{"total":1}}`,
    );
    seen.cwd = fewInvoices(CASES.length, fileTempDir);
    const run = await extract(seen.cwd, service.url, ['in/', '--route', 'inline', '-o', 'out.jsonl']);
    expect(run.exitCode, run.stderr).toBe(1);
    expect(run.stderr).not.toMatch(/pages? charged.*e\+|unexpected error|\n\s+at /);
    seen.stderr = String(run.stderr);
    seen.charged = service.charged();
  }, 120_000);

  CASES.forEach(([label, value], i) => {
    const id = `doc_${i + 1}`;
    it(`page_count ${label} is a bad answer, recorded with its document_id in a fact the journal reads back`, () => {
      expect(seen.charged).toBe(CASES.length); // one charge per document, none repeated
      const [record, ...others] = readJsonLines(readFileSync(join(seen.cwd, 'out.jsonl'), 'utf8')).filter(
        (r) => r.document_id === id,
      );
      expect(others).toEqual([]);
      expect(record).toMatchObject({ document_id: id, status: 'error', page_count: null });
      expect(seen.stderr).toContain(`page_count ${JSON.stringify(JSON.parse(value))}, which is not a number of pages`);
      const journal = journalOf(defaultJournalIn(seen.cwd));
      expect(journal.skipped, journalText(defaultJournalIn(seen.cwd))).toBe(0);
      const failed = journal.facts.find((f) => f.fact === 'failed' && f.document_id === id);
      expect(failed).toMatchObject({ document_id: id, charge: 'uncertain' });
    });
  });
});

describe('--retry-failed on a document the service holds', () => {
  it('fetches it by its document_id (a GET, never a second charge) when its answer was refused', async ({
    httpServer,
  }) => {
    // The extract answer is unusable; the document itself, fetched later, is fine.
    const service = await standIn(httpServer, (id, how) =>
      how === 'extract'
        ? `{"success":true,"parser_id":"par_1","document_id":"${id}","status":"completed","file_name":"x.pdf","error":null,"page_count":1e300,"results":{"total":1}}`
        : `{"document_id":"${id}","parser_id":"par_1","status":"completed","file_name":"x.pdf","page_count":1,"error":null,"results":{"total":1}}`,
    );
    const cwd = fewInvoices(2);
    const first = await extract(cwd, service.url, ['in/', '--route', 'inline', '-o', 'out.jsonl']);
    expect(first.exitCode, first.stderr).toBe(1);
    expect(service.charged()).toBe(2);

    const retried = await extract(cwd, service.url, ['in/', '--route', 'inline', '--retry-failed', '-o', 'out.jsonl']);
    expect(retried.exitCode, retried.stderr).toBe(0);
    expect(service.charged()).toBe(2);
    const records = readJsonLines(readFileSync(join(cwd, 'out.jsonl'), 'utf8'));
    expect(records.map((r) => [r.status, r.document_id]).sort()).toEqual([
      ['completed', 'doc_1'],
      ['completed', 'doc_2'],
    ]);
  });
});

/** Whether this machine lets the tests mount a tmpfs; the in-process variant (test/journal/rescue.test.ts) runs everywhere. */
const noTmpfs = tmpfsRefused();

describe('a full disk under the journal', () => {
  it.skipIf(noTmpfs !== undefined)(
    `loses nothing charged: a clear error (exit 6), the results in the output, and the rerun after freeing space pays nothing${noTmpfs === undefined ? '' : ` [skipped: ${noTmpfs}]`}`,
    async () => {
      const disk = join(tempDir('extract-full-'), 'disk');
      mkdirSync(disk);
      expect(mountTmpfs(disk, '64k')).toBeUndefined();
      try {
        await fullDiskRun(disk);
      } finally {
        unmount(disk);
      }
    },
    120_000,
  );
});

describe('a full disk under the default (SQLite) journal', () => {
  it.skipIf(noTmpfs !== undefined)(
    `every answer in flight is kept: the results in the output, the facts in a private rescue file on another disk, and no rerun pays again${noTmpfs === undefined ? '' : ` [skipped: ${noTmpfs}]`}`,
    async ({ httpServer }) => {
      const disk = join(tempDir('extract-full-'), 'disk');
      mkdirSync(disk);
      expect(mountTmpfs(disk, '8m')).toBeUndefined();
      try {
        await fullSqliteRun(httpServer, disk);
      } finally {
        unmount(disk);
      }
    },
    120_000,
  );
});

describe('the default (SQLite) journal locked by another process past --state-wait', () => {
  it('every answer in flight is kept (output, rescue file beside the journal); the reruns pay nothing again', async ({
    httpServer,
  }) => {
    const url = service();
    const cwd = workDir();
    const names = fixtureNames();
    const state = join(cwd, 'journal.sqlite');
    // Another process opens the journal and holds it in BEGIN EXCLUSIVE from the third extract request on.
    let holder: ReturnType<typeof execa> | undefined;
    let extracts = 0;
    const proxy = await countingProxy(httpServer, url, async (method, path) => {
      if (method !== 'POST' || !path.endsWith('/extract') || ++extracts !== 3) return;
      holder = execa(
        process.execPath,
        [
          '-e',
          `const { DatabaseSync } = require('node:sqlite');
           const db = new DatabaseSync(process.argv[1], { timeout: 10000 });
           db.exec('BEGIN EXCLUSIVE');
           console.log('locked');
           setInterval(() => {}, 1000);`,
          state,
        ],
        { reject: false },
      );
      await new Promise<void>((resolve) => holder!.stdout!.once('data', () => resolve()));
    });
    const args = ['in/', '--route', 'inline', '-c', '4', '--state', state, '--state-wait', '1s', '-o', 'out.jsonl'];
    let first: Awaited<ReturnType<typeof extract>>;
    try {
      first = await extract(cwd, proxy.url, args);
    } finally {
      holder?.kill('SIGKILL');
      await holder;
    }
    expect(first.stderr).not.toMatch(/unexpected error|\n\s+at /);
    expect(first.exitCode, first.stderr).toBe(6);
    expect(first.stderr).toMatch(/could not be written \(another process holds it locked\): stopped sending/);
    const charged = await reservesBySha(url);
    const completed = readJsonLines(readFileSync(join(cwd, 'out.jsonl'), 'utf8')).filter(
      (r) => r.status === 'completed',
    );
    expect(completed).toHaveLength(charged.size);
    const rescued = readdirSync(`${state}.rescue`);
    expect(rescued).toHaveLength(1);
    expect(first.stderr).toContain(`kept in ${join(`${state}.rescue`, rescued[0]!)}`);

    const second = await extract(cwd, proxy.url, args);
    expect(second.exitCode, second.stderr).toBe(0);
    const retried = await extract(cwd, proxy.url, [...args, '--retry-failed']);
    expect(retried.exitCode, retried.stderr).toBe(0);
    expect([...(await reservesBySha(url)).values()]).toEqual(names.map(() => 1));
    expect(extracts).toBe(names.length);
  });
});

describe('a full temp directory under the record spool', () => {
  it.skipIf(noTmpfs !== undefined)(
    `a run's records outlive it: every line the spool cannot write is kept in memory, none lost, the last update kept${noTmpfs === undefined ? '' : ` [skipped: ${noTmpfs}]`}`,
    () => {
      const tmp = join(tempDir('extract-spool-'), 'tmp');
      mkdirSync(tmp);
      // Room for the first block (256 KB) and part of the second: the second write fails midway.
      expect(mountTmpfs(tmp, '400k')).toBeUndefined();
      let spool: RecordSpool | undefined;
      try {
        spool = RecordSpool.open(tmp);
        expect(spool).toBeDefined();
        const entry = (i: number, note = ''): ReportEntry => ({
          ...completedRecord({ file: `in/f${i}${note}.pdf`, document_id: `doc_${i}`, route: 'inline' }, 1, {
            total: i,
            vendor: 'x'.repeat(200),
          }),
          outcome: 'completed',
          sha256: i.toString(16).padStart(64, '0'),
        });
        const n = 3000; // ~1 MB of lines: over the tmpfs
        for (let i = 0; i < n; i++) spool!.put(`k${i}`, entry(i));
        // Updated after the disk filled: one written before, one pending when it failed, one after.
        for (const i of [0, 1500, n - 1]) spool!.put(`k${i}`, entry(i, '-moved'));
        for (let i = 0; i < n; i++) {
          const note = i === 0 || i === 1500 || i === n - 1 ? '-moved' : '';
          expect(spool!.get(`k${i}`), `record ${i}`).toEqual(entry(i, note));
        }
      } finally {
        spool?.close();
        unmount(tmp);
      }
    },
  );
});

async function fullDiskRun(disk: string): Promise<void> {
  const server = { url: service() };
  const cwd = workDir();
  const names = fixtureNames();
  const state = join(disk, 'journal.jsonl');
  // Room for the lock, the stat cache and a page or two of facts: the disk fills mid-run.
  const { bavail, bsize } = statfsSync(disk);
  const filler = join(disk, 'filler');
  writeFileSync(filler, Buffer.alloc(Math.max(0, Number(bavail * bsize) - 4 * 4096)));
  const args = ['in/', '--route', 'inline', '-c', '1', '--state', state, '-o', 'out.jsonl'];
  const first = await extract(cwd, server.url, args);
  expect(first.stderr).not.toMatch(/unexpected error|\n\s+at /);
  expect(first.exitCode, first.stderr).toBe(6);
  expect(first.stderr).toMatch(/could not be written \(the disk is full\)/);
  expect(first.stderr).toMatch(/free space/);
  const charged = [...(await reservesBySha(server.url)).keys()].length;
  expect(charged).toBeGreaterThan(0);
  expect(charged).toBeLessThan(names.length);
  // Every document charged is in the output, completed.
  const records = readJsonLines(readFileSync(join(cwd, 'out.jsonl'), 'utf8'));
  expect(records.filter((r) => r.status === 'completed')).toHaveLength(charged);

  rmSync(filler);
  const second = await extract(cwd, server.url, args);
  expect(second.exitCode, second.stderr).toBe(0);
  const reserves = await reservesBySha(server.url);
  expect(reserves.size).toBe(names.length);
  expect([...reserves.values()].every((n) => n === 1)).toBe(true);
  const again = readJsonLines(readFileSync(join(cwd, 'out.jsonl'), 'utf8'));
  expect(again.map((r) => r.status)).toEqual(names.map(() => 'completed'));
}

async function fullSqliteRun(httpServer: StartHttpServer, disk: string): Promise<void> {
  const url = service();
  const cwd = workDir();
  const names = fixtureNames();
  const state = join(disk, 'journal.sqlite');
  // The rescue's other disk: a private runtime folder of the test, not the shared /tmp.
  const runtime = tempDir('extract-runtime-');
  const baseEnv = cleanEnv({
    EXTRACT_API_KEY: KEY,
    EXTRACT_BASE_URL: url,
    EXTRACT_CONFIG_DIR: join(cwd, '.config'),
    XDG_STATE_HOME: stateHomeIn(cwd),
    XDG_RUNTIME_DIR: runtime,
  });
  // The disk fills as the third extract request reaches the service: the answers to the requests
  // in flight then find a journal that cannot take them.
  const filler = join(disk, 'filler');
  let extracts = 0;
  const proxy = await countingProxy(httpServer, url, (method, path) => {
    if (method !== 'POST' || !path.endsWith('/extract') || ++extracts !== 3) return;
    const { bavail, bsize } = statfsSync(disk);
    writeFileSync(filler, Buffer.alloc(Number(bavail * bsize)));
  });
  const args = ['in/', '--route', 'inline', '-c', '4', '--state', state, '-o', 'out.jsonl'];
  const env = { ...baseEnv, EXTRACT_BASE_URL: proxy.url };

  const first = await extract(cwd, url, args, { env });
  expect(first.stderr).not.toMatch(/unexpected error|\n\s+at /);
  expect(first.exitCode, first.stderr).toBe(6);
  expect(first.stderr).toMatch(/could not be written \(the disk is full\): stopped sending/);
  const charged = await reservesBySha(url);
  expect(charged.size).toBeGreaterThan(0);
  // Every document charged is in the output, completed: none abandoned in flight.
  const records = readJsonLines(readFileSync(join(cwd, 'out.jsonl'), 'utf8'));
  const completed = records.filter((r) => r.status === 'completed');
  expect(completed).toHaveLength(charged.size);
  // The facts the journal refused are in a rescue file in the private runtime folder, named with their documents.
  const rescueDir = join(runtime, 'extract-rescue');
  const rescued = readdirSync(rescueDir);
  expect(rescued.length).toBe(1);
  expect(statSync(rescueDir).mode & 0o777).toBe(0o700);
  expect(statSync(join(rescueDir, rescued[0]!)).mode & 0o777).toBe(0o600);
  expect(first.stderr).toContain(join(rescueDir, rescued[0]!));
  const kept = parseJournal(readFileSync(join(rescueDir, rescued[0]!), 'utf8')).facts;
  expect(kept.length).toBeGreaterThan(0);
  const ids = new Set(completed.map((r) => r.document_id));
  for (const fact of kept) {
    expect(fact.fact).toBe('completed');
    if (fact.fact !== 'completed') continue;
    expect(ids.has(fact.document_id)).toBe(true);
    expect(first.stderr).toContain(fact.document_id);
  }

  rmSync(filler);
  const second = await extract(cwd, url, args, { env });
  expect(second.exitCode, second.stderr).toBe(0);
  expect(second.stderr).toMatch(/took back into the journal \d+ facts?/);
  expect(readdirSync(rescueDir)).toEqual([]);
  const retried = await extract(cwd, url, [...args, '--retry-failed'], { env });
  expect(retried.exitCode, retried.stderr).toBe(0);
  const reserves = await reservesBySha(url);
  expect(reserves.size).toBe(names.length);
  expect([...reserves.values()]).toEqual(names.map(() => 1));
  const again = readJsonLines(readFileSync(join(cwd, 'out.jsonl'), 'utf8'));
  expect(again.map((r) => r.status)).toEqual(names.map(() => 'completed'));
  // One extract request per document over the three runs: nothing sent twice.
  expect(extracts).toBe(names.length);
}

/** A proxy in front of `target` that counts the requests per path. */
async function countingProxy(
  httpServer: StartHttpServer,
  target: string,
  onRequest: (method: string, url: string) => void | Promise<void> = () => {},
) {
  const paths: string[] = [];
  const server = await httpServer((req, res) => {
    paths.push(`${req.method} ${req.url}`);
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      await onRequest(req.method ?? 'GET', req.url ?? '');
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string' && k !== 'host') headers[k] = v;
      const method = req.method ?? 'GET';
      const answer = await fetch(`${target}${req.url}`, {
        method,
        headers,
        ...(method === 'GET' ? {} : { body: Buffer.concat(chunks) }),
      });
      const text = Buffer.from(await answer.arrayBuffer());
      res.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'text/plain' }).end(text);
    });
  });
  return { url: server.url, paths };
}

describe('a wrong service is named, not ground through', () => {
  it('a doubled /api/v1 after a good night: one request, exit 2 with the hint, and the completed records of -o DIR/ and -o FILE stay as they were', async ({
    httpServer,
  }) => {
    const server = { url: service() };
    const cwd = fewInvoices(4);
    for (const out of ['results/', 'r.jsonl']) {
      const good = await extract(cwd, server.url, ['in/', '-o', out]);
      expect(good.exitCode, good.stderr).toBe(0);
    }
    const before = readdirSync(join(cwd, 'results')).map((f) => readFileSync(join(cwd, 'results', f), 'utf8'));
    const jsonlBefore = readFileSync(join(cwd, 'r.jsonl'), 'utf8');
    const proxy = await countingProxy(httpServer, server.url);
    for (const out of ['results/', 'r.jsonl']) {
      const wrong = await extract(cwd, `${proxy.url}/api/v1`, ['in/', '-o', out]);
      expect(wrong.stderr).not.toMatch(/unexpected error|\n\s+at /);
      expect(wrong.exitCode, wrong.stderr).toBe(2);
      expect(wrong.stderr).toMatch(/\/api\/v1 .*twice|doubled/);
    }
    // Each run stopped at its first refusal (the whole batch is not ground through).
    expect(proxy.paths.length).toBeLessThanOrEqual(2);
    expect(readdirSync(join(cwd, 'results')).map((f) => readFileSync(join(cwd, 'results', f), 'utf8'))).toEqual(before);
    expect(readFileSync(join(cwd, 'r.jsonl'), 'utf8')).toBe(jsonlBefore);
    expect(readJsonLines(jsonlBefore).map((r) => r.status)).toEqual(Array(4).fill('completed'));
    // Nothing was charged by the wrong runs: one charge per document, from the good night.
    const reserves = await reservesBySha(server.url);
    expect([...reserves.values()]).toEqual([1, 1, 1, 1]);
  }, 120_000);

  it('an HTML page at the first request (a wrong host) stops the run with exit 2 and says so', async ({
    httpServer,
  }) => {
    let requests = 0;
    const site = await httpServer((_req, res) => {
      requests++;
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end('<!doctype html><title>Welcome</title>');
    });
    const cwd = workDir();
    const run = await extract(cwd, site.url, ['in/', '-c', '1', '-o', 'out.jsonl']);
    expect(run.stderr).not.toMatch(/unexpected error|\n\s+at /);
    expect(run.exitCode, run.stderr).toBe(2);
    expect(run.stderr).toMatch(/HTML page.*wrong host/);
    expect(requests).toBe(1);
  });
});
