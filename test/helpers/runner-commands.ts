/**
 * The GitHub Actions runner's reading of a step's output, as actions/runner's ActionCommand and
 * ActionCommandManager do it, so a test can ask which workflow commands a run's output would
 * carry out: a line whose text, leading white space trimmed, starts `::name params::value`
 * (TryParseV2), and `##[name params]value` anywhere in a line (TryParse, the older form). Lines
 * end at LF, CR or CRLF (.NET's ReadLine). `::stop-commands::TOKEN` turns commands off until a
 * line `::TOKEN::`. Every name is taken as a command, not only the runner's registered ones:
 * a new command the runner learns must not slip through either.
 */
export type RunnerCommand = { name: string; properties: string; data: string; form: '::' | '##[' };

export function runnerCommands(output: string): RunnerCommand[] {
  const found: RunnerCommand[] = [];
  let stopToken: string | undefined;
  for (const line of output.split(/\r\n|\r|\n/)) {
    if (stopToken !== undefined) {
      if (line.trim().toLowerCase() === `::${stopToken}::`.toLowerCase()) {
        found.push({ name: stopToken, properties: '', data: '', form: '::' });
        stopToken = undefined;
      }
      continue;
    }
    const command = parseV2(line) ?? parseV1(line);
    if (command === undefined) continue;
    found.push(command);
    if (command.name.toLowerCase() === 'stop-commands') stopToken = command.data;
  }
  return found;
}

function parseV2(line: string): RunnerCommand | undefined {
  const message = line.trimStart();
  if (!message.startsWith('::')) return undefined;
  const end = message.indexOf('::', 2);
  if (end < 0) return undefined;
  const info = message.slice(2, end);
  const space = info.indexOf(' ');
  const name = space < 0 ? info : info.slice(0, space);
  if (name === '') return undefined;
  return { name, properties: space < 0 ? '' : info.slice(space + 1), data: message.slice(end + 2), form: '::' };
}

function parseV1(line: string): RunnerCommand | undefined {
  const start = line.indexOf('##[');
  if (start < 0) return undefined;
  const close = line.indexOf(']', start);
  if (close < 0) return undefined;
  const info = line.slice(start + 3, close);
  const space = info.indexOf(' ');
  const name = space < 0 ? info : info.slice(0, space);
  if (name === '') return undefined;
  return { name, properties: space < 0 ? '' : info.slice(space + 1), data: line.slice(close + 1), form: '##[' };
}
