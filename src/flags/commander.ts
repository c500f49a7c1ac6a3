import { type Command, Option } from 'commander';
import { durationFlag, sizeFlag } from './units.ts';
import { type FlagSpec, type FlagTable, flagsOf } from './spec.ts';

/**
 * Adds a table's flags to a commander command, in the table's order (the order --help lists).
 * Each default is handed to commander as people would type it ("2s", "5MB", "4"): --help, the
 * reference page and the man page show it, and parse.ts reads it back like any typed value.
 */
export function addFlags(command: Command, table: FlagTable): Command {
  for (const [key, spec] of Object.entries(table)) command.addOption(optionOf(key, spec));
  return command;
}

function optionOf(key: string, spec: FlagSpec): Option {
  const option = new Option(flagsOf(key, spec), spec.description);
  switch (spec.kind) {
    case 'list':
      // No commander default: --help would show "(default: [])"; parse.ts reads none as [].
      return option.argParser((value: string, previous: string[] | undefined) => [...(previous ?? []), value]);
    case 'path':
    case 'text':
      if (spec.kind === 'text' && spec.choices !== undefined) option.choices(spec.choices);
      if (spec.conflicts !== undefined) option.conflicts(spec.conflicts);
      return spec.default === undefined ? option : option.default(spec.default);
    case 'size':
      return spec.default === undefined ? option : option.default(sizeFlag(spec.default));
    case 'duration':
      return spec.default === undefined ? option : option.default(durationFlag(spec.default));
    case 'count':
      return spec.default === undefined ? option : option.default(String(spec.default));
    case 'custom':
      return spec.default === undefined ? option : option.default(spec.default);
    default:
      return option;
  }
}
