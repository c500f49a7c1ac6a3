import { expectTypeOf, it } from 'vitest';
import type { StateJournal } from '../../src/journal/state/index.ts';

/** The members of `T` a backend may leave out. */
type Optional<T> = { [K in keyof T]-?: object extends Pick<T, K> ? K : never }[keyof T];

it('the journal interface is honest: every backend has every member, none is optional (view() included)', () => {
  // Checked by the type-checker: an optional member would be one that some backend lacks and throws on.
  expectTypeOf<Optional<StateJournal>>().toEqualTypeOf<never>();
  expectTypeOf<StateJournal['view']>().toBeFunction();
});
