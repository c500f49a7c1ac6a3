import { readFileSync, writeFileSync, mkdirSync, statSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { join } from 'node:path';
import { expect } from 'vitest';
import { it as test } from '../helpers/fixtures.ts';
import type { StartHttpServer } from '../helpers/http-server.ts';
import { cleanEnv, stateHomeIn, tempDir } from '../helpers/cli.ts';
import { defaultJournalIn, journalText } from '../helpers/journal.ts';
import { runnerCommands, type RunnerCommand } from '../helpers/runner-commands.ts';
import { extract, FIXTURES, fixtureNames, KEY } from './batch-helpers.ts';

/**
 * Under GitHub Actions the runner reads every line of a step's stdout and stderr for workflow
 * commands. File names and the service's text are written by others: whatever they hold, the only
 * commands in the output are extract's own annotations (and the fence it may put around records).
 */

const INJECTIONS = ['\n::add-mask::x', '\r##[set-output name=ok;]1', '\n::stop-commands::tok'];
const HOSTILE_TEXT = `boom${INJECTIONS.join('')}\n::error ::svc`;
const HUGE_TEXT = `huge${'\n::warning ::w'.repeat(8)}${'x'.repeat(3 * 1024 * 1024)}`;
const RESULT_VALUE = '\n::error ::x';

/**
 * The service as deployed (`success: false` for a failed extraction, `{"error": …}` otherwise),
 * answering by file name: `fail` a refused extraction whose error text carries injections,
 * `huge` one whose error text is 3 MiB, `http` a 422 whose body carries injections, the rest
 * a completed document whose value carries a line that would be a command.
 */
async function hostileService(httpServer: StartHttpServer): Promise<string> {
  const server = await httpServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const send = (status: number, body: unknown): void => {
        res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
      };
      if (!(req.method === 'POST' && req.url === '/api/v1/extract')) {
        res.writeHead(404, { 'content-type': 'text/html' }).end('<html>404: This page could not be found.</html>');
        return;
      }
      const name =
        (JSON.parse(Buffer.concat(chunks).toString('utf8')) as { file?: { name?: string } }).file?.name ?? '';
      const id = `doc_${Math.random().toString(36).slice(2)}`;
      if (name.startsWith('fail')) send(200, { success: false, document_id: id, error: HOSTILE_TEXT });
      else if (name.startsWith('huge')) send(200, { success: false, document_id: id, error: HUGE_TEXT });
      else if (name.startsWith('http')) send(422, { error: HOSTILE_TEXT });
      else send(200, { success: true, parser_id: 'par_1', document_id: id, results: { invoice_number: RESULT_VALUE } });
    });
  });
  return server.url;
}

function hostileFolder(): string {
  const dir = tempDir('extract-gha-');
  const input = join(dir, 'in');
  mkdirSync(input, { recursive: true });
  const pdf = readFileSync(join(FIXTURES, fixtureNames()[0]!));
  // Each file's own bytes (one more at the end), so no two are one content.
  let n = 0;
  const put = (name: string): void =>
    writeFileSync(join(input, name), Buffer.concat([pdf, Buffer.from(`\n%${n++}\n`)]));
  for (const injection of INJECTIONS) {
    put(`ok${injection}.pdf`);
    put(`fail${injection}.pdf`);
    put(`http${injection}.pdf`);
    writeFileSync(join(input, `note${injection}.txt`), 'not a document');
  }
  put('huge.pdf');
  put('huge-too.pdf');
  return dir;
}

/** A run under GitHub Actions against the service at `url`, its state and config inside `cwd`. */
function githubEnv(cwd: string, url: string, more: Record<string, string> = {}): Record<string, string> {
  return cleanEnv({
    EXTRACT_API_KEY: KEY,
    EXTRACT_BASE_URL: url,
    EXTRACT_CONFIG_DIR: join(cwd, '.config'),
    XDG_STATE_HOME: stateHomeIn(cwd),
    GITHUB_ACTIONS: 'true',
    CI: 'true',
    ...more,
  });
}

/** The commands that are extract's own: its annotations. */
const own = (c: RunnerCommand): boolean =>
  c.form === '::' && (c.name === 'error' || c.name === 'warning') && /^file=/.test(c.properties);

test('github: names, service text and results carry no workflow command', async ({ httpServer }) => {
  const cwd = hostileFolder();
  const url = await hostileService(httpServer);
  const summaryFile = join(cwd, 'step-summary.md');
  writeFileSync(summaryFile, '');
  const run = await extract(cwd, url, ['in', '--format', 'csv'], {
    env: githubEnv(cwd, url, { GITHUB_STEP_SUMMARY: summaryFile }),
  });
  const stdout = String(run.stdout);
  const stderr = String(run.stderr);
  expect(run.exitCode, stderr.slice(0, 4000)).toBe(1);

  // The records are exact on stdout: the value with its line break is there, as data.
  expect(stdout).toContain(RESULT_VALUE.trim());

  // stderr: only extract's annotations, one per failed document (each of the 3 names x 2 failing kinds + 2 huge).
  const onStderr = runnerCommands(stderr);
  expect.soft(onStderr.filter((c) => !own(c))).toEqual([]);
  expect.soft(onStderr.filter((c) => c.name === 'error')).toHaveLength(8);
  // stdout: nothing but a stop-commands fence and its end.
  const onStdout = runnerCommands(stdout);
  const fence = onStdout.filter((c) => c.name === 'stop-commands');
  expect.soft(onStdout.filter((c) => c.name !== 'stop-commands' && !fence.some((f) => f.data === c.name))).toEqual([]);
});

/**
 * The service's interface, upload and poll: every document ends in `error` with 3 MiB of text
 * (GET documents/{id}), which the client reads whole (under its answer cap) and must not repeat.
 */
async function verboseService(httpServer: StartHttpServer): Promise<string> {
  let made = 0;
  const server = await httpServer((req: IncomingMessage, res: ServerResponse) => {
    req.resume();
    req.on('end', () => {
      const send = (status: number, body: unknown): void => {
        res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
      };
      const path = req.url ?? '';
      if (req.method === 'POST' && path === '/api/v1/upload-url') {
        const id = ++made;
        send(200, { upload_url: `/_storage/${id}`, storage_path: `uploads/${id}`, expires_in: 900 });
      } else if (req.method === 'PUT' && path.startsWith('/_storage/')) res.writeHead(200).end();
      else if (req.method === 'POST' && path === '/api/v1/extract')
        send(202, { success: true, document_id: `doc_${++made}`, status: 'processing', poll_url: '' });
      else if (req.method === 'GET' && path.startsWith('/api/v1/documents/')) {
        const id = path.slice('/api/v1/documents/'.length);
        send(200, {
          document_id: id,
          status: 'error',
          file_name: 'x.pdf',
          page_count: 1,
          results: null,
          error: HUGE_TEXT,
        });
      } else send(404, { error: 'not found' });
    });
  });
  return server.url;
}

test('github: a service that fails each document with 3 MiB of text costs a line, not megabytes', async ({
  httpServer,
}) => {
  const cwd = tempDir('extract-gha-');
  mkdirSync(join(cwd, 'in'));
  const pdf = readFileSync(join(FIXTURES, fixtureNames()[0]!));
  for (const i of [1, 2])
    writeFileSync(join(cwd, 'in', `huge${i}.pdf`), Buffer.concat([pdf, Buffer.from(`\n%${i}\n`)]));
  const url = await verboseService(httpServer);
  const summaryFile = join(cwd, 'step-summary.md');
  writeFileSync(summaryFile, '');
  const run = await extract(cwd, url, ['in', '-o', 'out.json', '--inline-max', '1'], {
    env: githubEnv(cwd, url, { GITHUB_STEP_SUMMARY: summaryFile }),
  });
  const stderr = String(run.stderr);
  expect(run.exitCode, stderr.slice(0, 4000)).toBe(1);
  expect.soft(runnerCommands(stderr).filter((c) => !own(c))).toEqual([]);
  expect.soft(runnerCommands(stderr).filter(own)).toHaveLength(2);
  expect.soft(Buffer.byteLength(stderr)).toBeLessThan(32 * 1024);
  expect.soft(statSync(summaryFile).size).toBeLessThan(32 * 1024);
  const failed = journalText(defaultJournalIn(cwd))
    .split('\n')
    .filter((l) => l.includes('huge ') || l.includes('::warning'));
  expect(failed.length).toBeGreaterThan(0);
  for (const line of failed) expect.soft(Buffer.byteLength(line)).toBeLessThan(4 * 1024);
});

test("github: a dry run's plan on stdout names hostile files without a command, and ends any fence it opens", async () => {
  const cwd = hostileFolder();
  const run = await extract(cwd, 'http://127.0.0.1:9', ['in', '--dry-run'], {
    env: cleanEnv({
      XDG_STATE_HOME: stateHomeIn(cwd),
      EXTRACT_CONFIG_DIR: join(cwd, '.config'),
      GITHUB_ACTIONS: 'true',
      CI: 'true',
    }),
  });
  expect(run.exitCode, String(run.stderr).slice(0, 4000)).toBe(0);
  const stdout = String(run.stdout);
  expect(stdout).toContain('\n::add-mask::x.pdf');
  const commands = runnerCommands(stdout);
  expect.soft(commands.map((c) => c.name)).toEqual(['stop-commands', commands[0]?.data]);
  expect.soft(runnerCommands(String(run.stderr))).toEqual([]);
});

test('github: an input that cannot be read is named without a command (a missing file, a damaged archive)', async ({
  httpServer,
}) => {
  const cwd = tempDir('extract-gha-');
  mkdirSync(join(cwd, 'in'));
  writeFileSync(join(cwd, 'in', 'bad\n::add-mask::z.zip'), 'PK\u0005\u0006 not an archive');
  const url = await hostileService(httpServer);
  const run = await extract(cwd, url, ['in', 'gone\n::stop-commands::tok.pdf'], {
    env: githubEnv(cwd, url),
  });
  const stderr = String(run.stderr);
  expect(run.exitCode, stderr.slice(0, 4000)).not.toBe(0);
  expect(stderr).toContain('gone');
  expect(runnerCommands(stderr).filter((c) => !own(c))).toEqual([]);
});
