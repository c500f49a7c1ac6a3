import { execa } from 'execa';
import { describe, expect } from 'vitest';
import { EmulatorConfig } from '../../src/contract/index.ts';
import { parseConfig } from '../../src/emulator/config.ts';
import { DEFAULT_CONFIG } from '../../src/emulator/default-config.ts';
import { CLI, cleanEnv, tempDir, writeJson } from '../helpers/cli.ts';
import { call } from '../helpers/emulator.ts';
import { it } from '../helpers/fixtures.ts';

const run = (args: string[]) =>
  execa(process.execPath, [CLI, ...args], { env: cleanEnv(), extendEnv: false, reject: false });

describe('extract serve: configuration', () => {
  it('config: names the bad path of an invalid configuration', () => {
    const bad = { ...DEFAULT_CONFIG, parsers: [{ ...DEFAULT_CONFIG.parsers[0]!, api_keys: ['sk_live_wrong_prefix'] }] };
    expect(() => parseConfig(bad)).toThrow(/✖ an API key starts with "ext_"\n\s*→ at parsers\[0\]\.api_keys\[0\]/);
    expect(() => parseConfig({ ...DEFAULT_CONFIG, credits: -1 })).toThrow(/credits/);
    const dupe = {
      ...DEFAULT_CONFIG,
      parsers: [
        {
          ...DEFAULT_CONFIG.parsers[0]!,
          fields: [
            { name: 'a', type: 'string' },
            { name: 'a', type: 'date' },
          ],
        },
      ],
    };
    expect(() => parseConfig(dupe)).toThrow(/✖ field name "a" is used twice\n\s*→ at parsers\[0\]\.fields\[1\]\.name/);
  });

  it('--print-config prints a configuration that validates and that serve accepts', async ({ spawnServe }) => {
    const r = await run(['serve', '--print-config']);
    expect(r.exitCode).toBe(0);
    const printed = JSON.parse(r.stdout);
    expect(EmulatorConfig.safeParse(printed).success).toBe(true);
    const dir = tempDir();
    const server = await spawnServe(['--config', writeJson(dir, 'c.json', printed)]);
    expect(server.stdout()).toContain('Parser "Invoices" (prs_invoices) API key: ext_');
    expect((await call(server, 'GET', '/_emulator/health')).body).toEqual({ ok: true });
  });

  it('exits 2 with the path and a next step for an invalid config file, and for a bad port', async () => {
    const dir = tempDir();
    const r = await run([
      'serve',
      '--port',
      '0',
      '--config',
      writeJson(dir, 'bad.json', { credits: 'lots', parsers: [] }),
    ]);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain('credits');
    expect(r.stderr).toContain('--print-config');
    const p = await run(['serve', '--port', 'http']);
    expect(p.exitCode).toBe(2);
    expect(p.stderr).toContain('--port');
    const missing = await run(['serve', '--port', '0', '--config', `${dir}/nope.json`]);
    expect(missing.exitCode).toBe(2);
    expect(missing.stderr).toContain('cannot read the config file');
    const { createServer } = await import('node:net');
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const port = (taken.address() as { port: number }).port;
    const busy = await run(['serve', '--port', '0', '--listen-port', String(port)]);
    taken.close();
    expect(busy.exitCode).toBe(2);
    expect(busy.stderr).toContain('--listen-port');
    expect(busy.stderr).toContain('--no-listen');
  });
});

describe('extract serve --profile', () => {
  it('--profile deployed plays the deployed service (upload-url is a 404 page), says so on start, and beats the config key; a bad name is exit 2', async ({
    spawnServe,
  }) => {
    const dir = tempDir();
    const deployedConfig = writeJson(dir, 'deployed.json', { ...DEFAULT_CONFIG, profile: 'deployed' });
    const flag = await spawnServe(['--profile', 'deployed', '--no-listen']);
    expect(flag.stdout()).toContain('Profile: deployed');
    const ticket = await call(flag, 'POST', '/api/v1/upload-url', {
      body: { file_name: 'a.pdf', file_type: 'application/pdf' },
    });
    expect(ticket.status).toBe(404);
    expect(ticket.headers.get('content-type')).toMatch(/^text\/html/);
    // The flag over the config file's key: the interface, whose upload-url answers.
    const over = await spawnServe(['--config', deployedConfig, '--profile', 'interface', '--no-listen']);
    expect(over.stdout()).toContain('Profile: interface');
    const issued = await call(over, 'POST', '/api/v1/upload-url', {
      body: { file_name: 'a.pdf', file_type: 'application/pdf' },
    });
    expect(issued.status).toBe(200);
    const bad = await run(['serve', '--port', '0', '--profile', 'live']);
    expect(bad.exitCode).toBe(2);
    expect(bad.stderr).toContain('deployed');
  });
});

describe('extract serve: the whole loop out of the box', () => {
  it('its built-in receiver gets the document.processed event of every completed document', async ({ spawnServe }) => {
    const { readFileSync, existsSync } = await import('node:fs');
    const { invoicePdf } = await import('../helpers/pdf.ts');
    const { inlineBody } = await import('../helpers/emulator.ts');
    const dir = tempDir();
    const server = await spawnServe(['--data-dir', `${dir}/data`]);
    const receiverLine = /Receiver: (\S+) writes each delivered event to (\S+)/.exec(server.stdout());
    expect(receiverLine).not.toBeNull();
    expect(server.stdout()).toMatch(/Webhook local-listener: POST http:\/\/127\.0\.0\.1:\d+\/webhook \(auth bearer\)/);
    const r = await call(server, 'POST', '/api/v1/extract', { body: inlineBody(await invoicePdf(77)) });
    expect(r.status).toBe(200);
    const out = receiverLine![2]!;
    await expect.poll(() => existsSync(out) && readFileSync(out, 'utf8').includes(r.body.document_id)).toBe(true);
    const record = JSON.parse(readFileSync(out, 'utf8').trim().split('\n')[0]!);
    expect(record).toMatchObject({
      document_id: r.body.document_id,
      status: 'completed',
      page_count: 1,
      route: 'webhook',
    });
    expect(record.results.invoice_number).toBe('INV-00077');
    expect(record.results.due_date).toBeNull();
  });
});
