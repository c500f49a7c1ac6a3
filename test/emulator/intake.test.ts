import { describe, expect, it } from 'vitest';
import { DEFAULT_CONFIG } from '../../src/emulator/default-config.ts';
import { parseConfig } from '../../src/emulator/config.ts';
import {
  arrivalTooLarge,
  Intake,
  type IntakeParts,
  MAX_ARRIVAL_FILE_BYTES,
  MAX_ARRIVAL_FILES,
} from '../../src/emulator/arrivals/intake.ts';

/** The intake's own rules, without HTTP (the routes' are hostile-uploads and the reliability forms tests). */

describe('intake', () => {
  it('intake: an upload names a known parser, else not found; a form holds at most 20 files of 100 MiB', () => {
    const config = parseConfig(DEFAULT_CONFIG);
    const parser = config.parsers[0]!;
    const intake = new Intake({
      ...({} as Omit<IntakeParts, 'parsers'>),
      parsers: new Map([[parser.parser_id, parser]]),
    });
    expect(intake.parser(parser.parser_id)).toBe(parser);
    expect(() => intake.parser('prs_nope')).toThrow(
      expect.objectContaining({
        code: 'not_found',
        message: 'no parser "prs_nope": GET /_emulator/parsers lists them',
      }),
    );
    expect([MAX_ARRIVAL_FILE_BYTES, MAX_ARRIVAL_FILES]).toEqual([100 * 1024 * 1024, 20]);
    expect(arrivalTooLarge('big.pdf')).toMatchObject({ code: 'payload_too_large' });
    expect(arrivalTooLarge('big.pdf').message).toMatch(
      /^big\.pdf is over 104857600 bytes: send it through the API's upload-and-poll route/,
    );
  });
});
