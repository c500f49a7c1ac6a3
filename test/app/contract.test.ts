import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DocumentStatus } from '../../src/contract/api.ts';
import { DeliveryState, LedgerKind } from '../../src/contract/emulator.ts';
import { APP_CONTRACT, APP_ROOT } from '../../src/emulator/routes/app.ts';
import { openStore } from '../../src/emulator/store.ts';

/** Every JavaScript file of the page, recursively. */
function appScripts(dir = join(APP_ROOT, 'js')): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? appScripts(join(dir, e.name)) : e.name.endsWith('.js') ? [join(dir, e.name)] : [],
  );
}

describe('one shape, one place', () => {
  it('the page gets the statuses and delivery states from the contract, and copies none of them', async () => {
    const served = await import(`data:text/javascript,${encodeURIComponent(APP_CONTRACT)}`);
    expect(served.DOCUMENT_STATUSES).toEqual(DocumentStatus.options);
    expect(served.DELIVERY_STATES).toEqual(DeliveryState.options);
    for (const file of appScripts()) {
      const text = readFileSync(file, 'utf8');
      for (const values of [DocumentStatus.options, DeliveryState.options]) {
        // An array literal that lists every value of an enum is a copy of it.
        const copy = new RegExp(`\\[\\s*${values.map((v) => `['"]${v}['"]`).join('\\s*,\\s*')}\\s*,?\\s*\\]`);
        expect(copy.test(text), `${file} copies ${values.join('|')}`).toBe(false);
      }
    }
  });

  it("the emulator's SQL CHECKs hold the contract's ledger kinds and delivery states", () => {
    const store = openStore({ inMemory: true });
    try {
      const sql = store.db
        .prepare("SELECT sql FROM sqlite_master WHERE type = 'table' AND name IN ('ledger', 'deliveries')")
        .all()
        .map((r) => String(r.sql))
        .join('\n');
      expect(sql).toContain(`kind IN (${LedgerKind.options.map((k) => `'${k}'`).join(', ')})`);
      expect(sql).toContain(`state IN (${DeliveryState.options.map((k) => `'${k}'`).join(', ')})`);
    } finally {
      store.close();
    }
  });
});
