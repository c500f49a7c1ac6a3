/**
 * The MIME sniffing libraries, in a module of their own so that src/mime.ts loads them on the
 * first file sniffed rather than at start-up: file-type's readers and mime-db's table are a
 * fifth of a batch's start-up, and a rerun whose files are known from the stat cache sniffs none.
 * (A static import here, not a dynamic import of the packages there: mime-types is CommonJS,
 * and a bundled dynamic import of it exposes only its default export.)
 */
export { fileTypeFromBuffer } from 'file-type';
export { default as mime } from 'mime-types';
