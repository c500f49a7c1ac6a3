/** `extract listen`: the webhook receiver (README: extract listen). `extract serve` embeds the same. */
export { startReceiver } from './server.ts';
export {
  RECEIVER_DEFAULTS,
  type ReceiverAuth,
  type ReceiverDeps,
  type ReceiverOptions,
  type ReceiverStats,
  type RunningReceiver,
} from './options.ts';
export { CSV_MAX_COLUMNS, OVERFLOW_FILE, REVIEW_FILE } from './sink.ts';
export { INBOX_FILE } from './inbox.ts';
export { nullFields, type ReviewEntry } from './records.ts';
