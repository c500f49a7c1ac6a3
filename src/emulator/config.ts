import { readFile } from 'node:fs/promises';
import { describeZodError, EmulatorConfig, type EmulatorConfigInput } from '../contract/index.ts';
import { ExtractError } from '../errors.ts';
import { DEFAULT_CONFIG } from './default-config.ts';
import { errnoCode } from '../errno.ts';

/** Validates a configuration; errors name the bad path ("parsers.0.api_keys.1: ..."). */
export function parseConfig(input: unknown, source = 'configuration'): EmulatorConfig {
  const parsed = EmulatorConfig.safeParse(input);
  if (parsed.success) return parsed.data;
  throw new ExtractError(
    'usage',
    `${source} is not valid:\n${describeZodError(parsed.error)}\nfix it, or run "extract serve --print-config" for a valid example`,
  );
}

export async function loadConfig(file: string | undefined): Promise<EmulatorConfig> {
  if (file === undefined) return parseConfig(DEFAULT_CONFIG, 'the built-in configuration');
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    const code = errnoCode(err);
    throw new ExtractError('usage', `cannot read the config file ${file} (${code ?? 'error'}): check the path`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new ExtractError(
      'usage',
      `the config file ${file} is not valid JSON (${(err as Error).message}): fix it and start again`,
    );
  }
  return parseConfig(json, `the config file ${file}`);
}

export function resolveConfig(config: EmulatorConfigInput | EmulatorConfig | undefined): EmulatorConfig {
  return parseConfig(config ?? DEFAULT_CONFIG);
}
