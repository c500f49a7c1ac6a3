import { ENV_BASE_URL } from '../config/env-names.ts';
import type { Env } from '../config/settings.ts';
import type { FlagValues } from '../flags/spec.ts';
import type { VERSION_FLAGS } from '../flags/tables.ts';
import { redactUrl } from '../redact.ts';
import type { Cli } from './cli-context.ts';
import { completionScript, type Shell } from './completion.ts';
import { storeHolding } from './stored-settings.ts';
import { VERSION } from './version.ts';

/** `extract version [--json]`. */
export async function versionFromCli(_args: [], flags: FlagValues<typeof VERSION_FLAGS>, cli: Cli): Promise<void> {
  cli.stdout.write(await versionReport(VERSION, flags.json, cli.env));
}

/** `extract completion bash|zsh|fish`: the script, from the commands as the program declares them. */
export async function completionFromCli([shell]: [Shell], _flags: object, cli: Cli): Promise<void> {
  cli.stdout.write(completionScript(cli.program, shell));
}

/**
 * `extract version [--json]`: the version, the runtime and platform, and the service this
 * machine's settings point at (EXTRACT_BASE_URL, else the config store). Never a secret: the
 * API key is not looked at, and a URL's user and password are redacted.
 */
async function versionReport(version: string, json: boolean, env: Env): Promise<string> {
  const service = await configuredBaseUrl(env);
  const report = {
    name: 'extract',
    version,
    runtime: { name: 'node', version: process.versions.node },
    platform: { os: process.platform, arch: process.arch },
    base_url: service?.url ?? null,
    base_url_source: service?.source ?? null,
  };
  if (json) return `${JSON.stringify(report)}\n`;
  return (
    `extract ${version}\n` +
    `runtime:  node ${process.version}\n` +
    `platform: ${process.platform} ${process.arch}\n` +
    `service:  ${service === undefined ? `not configured (set ${ENV_BASE_URL}, or extract config set base_url https://…)` : `${service.url} (from ${service.source === 'env' ? ENV_BASE_URL : 'the config store'})`}\n`
  );
}

async function configuredBaseUrl(env: Env): Promise<{ url: string; source: 'env' | 'config' } | undefined> {
  const fromEnv = env[ENV_BASE_URL];
  if (fromEnv !== undefined && fromEnv !== '') return { url: redactUrl(fromEnv.trim()), source: 'env' };
  const stored = (await storeHolding(env, 'base_url')).get('base_url');
  return stored === undefined || stored === '' ? undefined : { url: redactUrl(stored), source: 'config' };
}
