/** `extract listen`: the webhook receiver (README: extract listen). `extract serve` embeds the same. */
export { startReceiver } from './server.ts';
export type {
  ReceiverAuth,
  ReceiverOptions,
  RunningReceiver,
} from './options.ts';
export { CSV_MAX_COLUMNS, REVIEW_FILE } from './sink.ts';
export { INBOX_FILE } from './inbox.ts';
