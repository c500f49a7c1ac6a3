/**
 * The send phase's door: what the run, the finish and `extract get` take from it. The sending
 * itself (send.ts) is loaded with `await import()` where a document is to be sent, so this door
 * does not re-export it: a barrel would load it with every importer.
 */
export { createStopper, type Stopper } from './stopper.ts';
export { pollDocument } from './poll.ts';
