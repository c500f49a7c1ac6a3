/**
 * A batch run's garbage collector is told to favour memory over speed (V8's
 * --optimize-for-size, which it reads while running, unlike the heap sizes): its old
 * generation then grows to about twice what is live between full collections, not four
 * times. A run's live heap is small, but it makes garbage at the rate it sends documents;
 * without this its peak resident memory grows with the batch (bench row 10 measures it).
 * Called by the commands that run batches, never at import: --help and --version do not pay
 * for node:v8 (taken with process.getBuiltinModule: an ESM import of a Node module runs its lazy
 * getters). A batch run calls it once it reads or sends a document (BatchDeps.favourMemory): a
 * rerun that only stats files would spend a good part of its CPU in the extra collections.
 * Idempotent.
 */
export function favourMemory(): void {
  if (favoured) return;
  favoured = true;
  process.getBuiltinModule('node:v8').setFlagsFromString('--optimize-for-size');
}

let favoured = false;
