/**
 * The few error types the CLI turns into exit codes (README: "Exit codes").
 * Messages say what happened and end with what to do next. They never carry a secret.
 */
export type ErrorCode =
  /** Bad flags, arguments or config file: exit 2. */
  | 'usage'
  /** No input matched the patterns: exit 2. */
  | 'no_input'
  /** Another live run holds the journal (a .jsonl --state file's lock) or listen's inbox: exit 9. */
  | 'locked'
  /** The service said 402: stop submitting, state kept: exit 3. */
  | 'out_of_credits'
  /** The service rejected the API key: exit 4. */
  | 'auth'
  /** The state journal's database cannot be used (unreachable past the wait, refused us): exit 6. */
  | 'state'
  /** The service could not be reached to settle something a send depends on: exit 7. */
  | 'unreachable'
  /** An output or the report could not be written (a full disk, a reader gone, no permission): exit 8. */
  | 'output'
  /** Stopped by SIGINT/SIGTERM: exit 130. */
  | 'interrupted'
  /** Anything we did not plan for: exit 1, with enough to file a bug. */
  | 'internal';

export const EXIT_CODES = {
  ok: 0,
  failed: 1,
  usage: 2,
  out_of_credits: 3,
  auth: 4,
  pending: 5,
  state: 6,
  unreachable: 7,
  output: 8,
  locked: 9,
  interrupted: 130,
} as const;

export class ExtractError extends Error {
  readonly code: ErrorCode;
  constructor(code: ErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'ExtractError';
    this.code = code;
  }
}

export function exitCodeFor(code: ErrorCode): number {
  switch (code) {
    case 'usage':
    case 'no_input':
      return EXIT_CODES.usage;
    case 'out_of_credits':
      return EXIT_CODES.out_of_credits;
    case 'auth':
      return EXIT_CODES.auth;
    case 'state':
      return EXIT_CODES.state;
    case 'unreachable':
      return EXIT_CODES.unreachable;
    case 'output':
      return EXIT_CODES.output;
    case 'locked':
      return EXIT_CODES.locked;
    case 'interrupted':
      return EXIT_CODES.interrupted;
    case 'internal':
      return EXIT_CODES.failed;
  }
}
