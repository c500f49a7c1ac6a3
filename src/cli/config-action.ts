import { createInterface } from 'node:readline';
import { configGet, configList, configPath, configSet, configUnset, type ConfigDeps } from '../config/commands.ts';
import { openConfigStore } from '../config/store.ts';
import type { ConfigValues } from '../flags/common.ts';
import type { Cli } from './cli-context.ts';
import { hiddenPrompt } from './hidden-prompt.ts';
import { verbosityOf } from './verbosity.ts';

/** `extract config set|get|unset|list|path`: each forwards to src/config/commands.ts. */
export async function configSetFromCli([key, value]: [string, string | undefined], flags: ConfigValues, cli: Cli) {
  _print(await configSet({ key, value }, _deps(flags, cli)), flags, cli);
}

export async function configGetFromCli([key]: [string], flags: ConfigValues, cli: Cli): Promise<number> {
  const got = configGet({ key }, _deps(flags, cli));
  _print(got, flags, cli);
  return got.value === null ? 1 : 0;
}

export async function configUnsetFromCli([key]: [string], flags: ConfigValues, cli: Cli) {
  _print(configUnset({ key }, _deps(flags, cli)), flags, cli);
}

export async function configListFromCli(_args: [], flags: ConfigValues, cli: Cli) {
  _print(configList(_deps(flags, cli)), flags, cli);
}

export async function configPathFromCli(_args: [], flags: ConfigValues, cli: Cli) {
  _print(configPath(_deps(flags, cli)), flags, cli);
}

/** --json: what the command returned, as one object on stdout (its text went nowhere). */
function _print(data: object, flags: ConfigValues, cli: Cli): void {
  if (flags.json) cli.stdout.write(`${JSON.stringify(data)}\n`);
}

function _deps(flags: ConfigValues, cli: Cli): ConfigDeps {
  // -q keeps only warnings (a secret now in the shell's history); -v has nothing more to say here.
  const quiet = verbosityOf(flags) === 'quiet';
  return {
    store: openConfigStore({ env: cli.env }),
    env: cli.env,
    // --json: stdout holds the one object _print writes.
    stdout: (line) => (flags.json ? undefined : cli.stdout.write(`${line}\n`)),
    stderr: (line) => (quiet && !line.startsWith('warning:') ? undefined : cli.stderr.write(`${line}\n`)),
    readStdin: async () => {
      if (process.stdin.isTTY) return hiddenPrompt('paste the value and press Enter: ');
      // The first line only: a piped value needs no newline, a pasted one ends with Enter.
      const lines = createInterface({ input: process.stdin, terminal: false });
      for await (const line of lines) {
        lines.close();
        return line;
      }
      return '';
    },
  };
}
