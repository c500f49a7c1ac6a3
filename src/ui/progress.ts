import type { ColorLevel } from './color.ts';

export { colorLevel } from './color.ts';
import type { Writable } from 'node:stream';
import type { LogLevel } from '../client/deps.ts';
import { inert } from '../inert.ts';
import { redact } from '../redact.ts';
import { formatDuration } from './format.ts';

/**
 * What a person (or a log file) sees while a batch runs, on stderr only: stdout carries
 * records. On a TTY an ora spinner while discovering and planning, then a cli-progress
 * bar; elsewhere (a pipe, CI, --no-progress) plain timestamped lines with no control
 * characters, so cron mail and CI logs stay readable.
 */
export type Verbosity = 'quiet' | 'normal' | 'verbose';
export type ProgressStyle = 'bar' | 'plain';

export type Tally = { total: number; done: number; failed: number; pages: number };
export type Finish = 'ok' | 'failed' | 'pending' | 'quiet';

export interface Reporter {
  /** What the run is doing before the bar starts ("hashing 12 files"). */
  planning(text: string): void;
  start(total: number): void;
  /** One document reached an end: `failed` prints a failure line, `quiet` (not submitted) only with -v. */
  finished(file: string, how: Finish, detail: string, tally: Tally): void;
  log(level: LogLevel, message: string): void;
  stop(): void;
}

export type ReporterOptions = {
  stderr: Writable;
  style: ProgressStyle;
  verbosity: Verbosity;
  /** chalk's level (ui/color.ts colorLevel): 0 is none. */
  color: ColorLevel;
  now: () => number;
};

/** Plain lines unless stderr is a TTY outside CI and progress was not turned off. */
export function chooseStyle(
  isTTY: boolean,
  env: Record<string, string | undefined>,
  noProgress: boolean,
): ProgressStyle {
  const ci = env.CI !== undefined && env.CI !== '' && env.CI !== 'false' && env.CI !== '0';
  return isTTY && !ci && !noProgress && env.TERM !== 'dumb' ? 'bar' : 'plain';
}

/** A pending document (paid for, collected by a rerun) is a warning, not a failure. */
const LEVEL_OF: Record<Exclude<Finish, 'ok'>, LogLevel> = { failed: 'error', pending: 'warn', quiet: 'debug' };

const LEVEL_RANK: Record<LogLevel, number> = { debug: 0, info: 1, warn: 2, error: 3 };
const THRESHOLD: Record<Verbosity, number> = { verbose: 0, normal: 1, quiet: 3 };

/** The colours a reporter uses: chalk's, or none. */
type Paint = Record<'red' | 'yellow' | 'dim', (text: string) => string>;
const NO_PAINT: Paint = { red: (text) => text, yellow: (text) => text, dim: (text) => text };

export async function createReporter(options: ReporterOptions): Promise<Reporter> {
  // chalk only for colours: its colour detection imports node:process, whose every getter
  // (stdin, report...) then runs, a tenth of a rerun's start-up on a pipe or in cron.
  const chalk = options.color > 0 ? new (await import('chalk')).Chalk({ level: options.color }) : NO_PAINT;
  if (options.style === 'plain' || options.verbosity === 'quiet') return new PlainReporter(options, chalk);
  // Loaded only for a terminal: a cron job never pays for them.
  const [{ default: ora }, { default: cliProgress }] = await Promise.all([import('ora'), import('cli-progress')]);
  return new TerminalReporter(options, chalk, ora, cliProgress);
}

function rate(tally: Tally, since: number, now: number): string {
  const seconds = (now - since) / 1000;
  return seconds > 0 ? (tally.done / seconds).toFixed(1) : '0.0';
}

/**
 * Time left at the rate so far (documents done per elapsed time), from the run's own clock:
 * "ETA 40 s", "ETA 2 min 5 s"; "ETA --" before the first document ends, "" once all have.
 */
export function eta(tally: Tally, since: number, now: number): string {
  if (tally.done >= tally.total) return '';
  if (tally.done === 0 || now <= since) return 'ETA --';
  const left = ((now - since) / tally.done) * (tally.total - tally.done);
  return `ETA ${formatDuration(Math.max(1000, Math.round(left / 1000) * 1000))}`;
}

class PlainReporter implements Reporter {
  readonly #o: ReporterOptions;
  readonly #chalk: Paint;
  #started = 0;
  constructor(options: ReporterOptions, chalk: Paint) {
    this.#o = options;
    this.#chalk = chalk;
  }
  planning(text: string): void {
    // Planning steps tick per file; a log file only needs them with -v.
    this.log('debug', text);
  }
  start(total: number): void {
    this.#started = this.#o.now();
    this.log('info', `processing ${total} document${total === 1 ? '' : 's'}`);
  }
  finished(file: string, how: Finish, detail: string, tally: Tally): void {
    const n = `[${tally.done}/${tally.total}]`;
    const now = this.#o.now();
    const left = eta(tally, this.#started, now);
    if (how === 'ok')
      this.log('info', `${n} ${file}: ${detail} (${rate(tally, this.#started, now)} docs/s${left ? `, ${left}` : ''})`);
    else this.log(LEVEL_OF[how], `${n} ${file}: ${detail}`);
  }
  log(level: LogLevel, message: string): void {
    if (LEVEL_RANK[level] < THRESHOLD[this.#o.verbosity]) return;
    const stamp = new Date(this.#o.now()).toISOString();
    const tag =
      level === 'error'
        ? this.#chalk.red('error')
        : level === 'warn'
          ? this.#chalk.yellow('warn ')
          : level === 'debug'
            ? this.#chalk.dim('debug')
            : 'info ';
    this.#o.stderr.write(`${stamp} ${tag} ${oneLine(message)}\n`);
  }
  stop(): void {}
}

/**
 * A message as one line: it quotes file names and the service's words, and whatever those hold
 * (a line break, an escape sequence, a CI runner's command) is shown, never acted on.
 */
function oneLine(message: string): string {
  return inert(redact(message));
}

type OraFactory = typeof import('ora').default;
type CliProgress = typeof import('cli-progress');
type Spinner = ReturnType<OraFactory>;
type Bars = InstanceType<CliProgress['MultiBar']>;
type Bar = ReturnType<Bars['create']>;

class TerminalReporter implements Reporter {
  readonly #o: ReporterOptions;
  readonly #chalk: Paint;
  readonly #ora: OraFactory;
  readonly #cli: CliProgress;
  #spinner: Spinner | undefined;
  #bars: Bars | undefined;
  #bar: Bar | undefined;
  #started = 0;

  constructor(options: ReporterOptions, chalk: Paint, ora: OraFactory, cli: CliProgress) {
    this.#o = options;
    this.#chalk = chalk;
    this.#ora = ora;
    this.#cli = cli;
  }
  planning(text: string): void {
    // discardStdin would put stdin in raw mode and swallow Ctrl+C: keep SIGINT working.
    if (!this.#spinner)
      this.#spinner = this.#ora({ text, stream: this.#o.stderr, discardStdin: false, color: 'cyan' }).start();
    else this.#spinner.text = text;
  }
  start(total: number): void {
    this.#spinner?.stop();
    this.#spinner = undefined;
    this.#started = this.#o.now();
    this.#bars = new this.#cli.MultiBar(
      {
        stream: this.#o.stderr,
        // time_left, not eta: cli-progress fills its own {eta} (bare seconds) over a payload's.
        format: ` {bar} {value}/{total} documents | {pages} pages | {failed} failed | {rate} docs/s | {time_left}`,
        hideCursor: true,
        // cli-progress otherwise turns the terminal's line wrapping off while it draws, which
        // cuts every failure line at the terminal's width; with it on, the bar is cut instead.
        linewrap: true,
        clearOnComplete: false,
        barsize: 28,
        fps: 10,
      },
      this.#cli.Presets.shades_classic,
    );
    this.#bar = this.#bars.create(total, 0, { pages: 0, failed: 0, rate: '0.0', time_left: 'ETA --' });
  }
  finished(file: string, how: Finish, detail: string, tally: Tally): void {
    this.log(how === 'ok' ? 'debug' : LEVEL_OF[how], `${file}: ${detail}`);
    const now = this.#o.now();
    this.#bar?.update(tally.done, {
      pages: tally.pages,
      failed: tally.failed,
      rate: rate(tally, this.#started, now),
      time_left: eta(tally, this.#started, now) || 'done',
    });
  }
  log(level: LogLevel, message: string): void {
    if (LEVEL_RANK[level] < THRESHOLD[this.#o.verbosity]) return;
    const text = oneLine(message);
    const line =
      level === 'error'
        ? `${this.#chalk.red('✖')} ${text}`
        : level === 'warn'
          ? `${this.#chalk.yellow('!')} ${text}`
          : level === 'debug'
            ? this.#chalk.dim(text)
            : text;
    if (this.#bars) this.#bars.log(`${line}\n`);
    else if (this.#spinner) {
      this.#spinner.clear();
      this.#o.stderr.write(`${line}\n`);
      this.#spinner.render();
    } else this.#o.stderr.write(`${line}\n`);
  }
  stop(): void {
    this.#spinner?.stop();
    // cli-progress prints logged lines on its next redraw, and stop() does not redraw them:
    // without this, the last failure lines (often the ones that matter) were never shown.
    this.#bars?.update();
    this.#bars?.stop();
    this.#spinner = undefined;
    this.#bars = undefined;
  }
}
