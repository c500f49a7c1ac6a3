import { COMPACT_FLAGS, GET_FLAGS, RUN_FLAGS, STATUS_FLAGS, WATCH_FLAGS } from './batch.ts';
import { CONFIG_FLAGS } from './common.ts';
import { LISTEN_FLAGS, SERVE_FLAGS } from './servers.ts';
import { defineFlags, type FlagTable } from './spec.ts';

/** `extract version`. */
export const VERSION_FLAGS = defineFlags({
  json: { kind: 'switch', description: 'one JSON object: version, runtime, platform, base_url (never a secret)' },
});

/**
 * Every command's table, by the command's path as --help names it. A command not here takes no
 * flag but -h and -V (test/flags/tables.test.ts holds commander to this list, both ways).
 */
export const FLAG_TABLES: Readonly<Record<string, FlagTable>> = {
  extract: RUN_FLAGS,
  'extract serve': SERVE_FLAGS,
  'extract get': GET_FLAGS,
  'extract listen': LISTEN_FLAGS,
  'extract status': STATUS_FLAGS,
  'extract journal compact': COMPACT_FLAGS,
  'extract watch': WATCH_FLAGS,
  'extract version': VERSION_FLAGS,
  'extract config set': CONFIG_FLAGS,
  'extract config get': CONFIG_FLAGS,
  'extract config unset': CONFIG_FLAGS,
  'extract config list': CONFIG_FLAGS,
  'extract config path': CONFIG_FLAGS,
};
