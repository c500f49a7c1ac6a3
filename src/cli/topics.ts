import { DEFAULT_STATE_HELP } from '../flags/batch.ts';
import { ENV_API_KEY, ENV_BASE_URL, ENV_CONFIG_DIR, ENV_STATE_URL } from '../config/env-names.ts';

/**
 * The help topics (`extract help environment|exit-codes|formats`): the one source of this text.
 * The batch command's --help quotes the exit codes, and the docs pages may quote any of them.
 * Plain strings only: this module is part of the start-up bundle.
 */

/**
 * What bare `extract` prints (on stderr, exit 2): what it does, the common commands and where
 * the rest is, as gh and rclone answer a bare command; --help has every option.
 */
export const SHORT_USAGE = `extract: batch document extraction, and a local emulator of the extraction service

Usage:
  extract [options] <inputs...>   send files, folders or globs; records to -o (extract --local ... needs no account)
  extract watch <folders...>      send each file that arrives in drop folders
  extract get <document_id...>    fetch stored documents by id
  extract status                  what the journal says about a batch

"extract --help" lists every command and option; "extract help <command>" one command's.
`;

/** What each exit code of the CLI means (src/errors.ts: EXIT_CODES). */
export const EXIT_CODES_TEXT = `Exit codes:
  0    every document completed
  1    some documents failed (or were not submitted: --max-credits); a failure an earlier
       run set aside (it fails the same way again) is listed but known, not new: alone, exit 0
  2    usage or configuration error (bad flag, unknown command, no input matched, no API key,
       a base URL that is not the service: outputs left as they were)
  3    stopped: the service said 402, out of credits (state kept; top up and rerun)
  4    the service rejected the API key
  5    some documents still processing at the poll deadline (rerun to collect them)
  6    the journal could not be used (postgres:// unreachable, a .sqlite file locked past
       --state-wait, or a full disk under the journal: what was charged is kept for the rerun); fix it, then rerun
  7    the service stopped answering: no further submissions (rerun once it is back)
  8    an output or the report could not be written (full disk, reader gone), or --move-done/
       --move-failed could not move a file (it stays): fix it and rerun, nothing is paid again
  9    another run holds the journal (a .jsonl --state file is locked by a live run): nothing
       was sent; wait for that run to finish, or use another --state file
  130  interrupted (SIGINT/SIGTERM); rerun the same command to resume
`;

const ENVIRONMENT_TEXT = `Environment variables:
  ${ENV_API_KEY}          the API key (ext_...); --api-key wins over it, it wins over the config store
  ${ENV_BASE_URL}         the service's base URL (https://...); --base-url wins, then the config store
  ${ENV_STATE_URL}        a postgres:// journal shared by many workers; --state wins over it
  ${ENV_CONFIG_DIR}       the directory of the config store (default: the user's config directory;
                           "extract config path" prints the file)
  EXTRACT_LISTEN_TOKEN     extract listen: the bearer token senders must send (kept out of ps)
  EXTRACT_LISTEN_PASSWORD  extract listen: the basic authentication password (with --user)
  XDG_STATE_HOME           where the user's default journal lives:
                           ${DEFAULT_STATE_HELP}
  NO_COLOR                 set (to anything): no colours, even on a terminal (--color always still paints)
  FORCE_COLOR              colours even off a terminal (0 or false: none); --color never wins over it
  TERM                     dumb: no progress bar and no colours
  CI                       set: plain timestamped lines instead of a progress bar
  GITHUB_ACTIONS           true: failed documents become ::error annotations, null fields ::warning,
                           and a table of the outcomes goes to $GITHUB_STEP_SUMMARY

Precedence: flags, then the environment, then the config store ("extract config set KEY").
The API key is never printed whole: not in output, logs, reports or errors.
`;

const FORMATS_TEXT = `Output formats (-o PATH, or --format to override the extension):
  - or no -o     JSON Lines on stdout, one line as each document finishes
  FILE.json      one JSON array of records
  FILE.jsonl     JSON Lines (also .ndjson)
  FILE.csv       one row per document: file, document_id, status, page_count, error, then every
                 leaf field (Object fields as parent.child, Table fields as JSON text);
                 --explode FIELD writes one row per row of that Table field instead
  DIR/           one <name>.json per document, mirroring the inputs' folders
  a device, FIFO or /dev/fd/N
                 written as a stream (JSON Lines unless --format says otherwise), never replaced

Each record: file, document_id, status (completed, error, pending, not_submitted), page_count,
results (as the service returned them; null stays null), error, route, needs_review.
In CSV a null is an empty cell, never 0 or "null".

Side files: --report FILE (the run's summary as JSON, snake_case keys, one entry per document)
and --review FILE (completed documents with null fields, as JSON Lines). "-" is stdout.
Files are replaced atomically, and left as they are when nothing changed.
`;

export const TOPICS = {
  environment: { summary: 'environment variables extract reads', text: ENVIRONMENT_TEXT },
  'exit-codes': { summary: 'what each exit code means', text: EXIT_CODES_TEXT },
  formats: { summary: 'output formats, records, --report and --review', text: FORMATS_TEXT },
} as const;

export type Topic = keyof typeof TOPICS;

export const TOPIC_NAMES = Object.keys(TOPICS) as Topic[];
