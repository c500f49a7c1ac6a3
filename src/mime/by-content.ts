/**
 * The MIME sniffing libraries, each in a module of its own so that detect.ts loads them when
 * first needed rather than at start-up: file-type on the first file sniffed (a rerun whose files
 * the stat cache knows sniffs none), mime-types and mime-db's table only for a file whose content
 * file-type cannot name (a PDF or an image never needs it). A static import here, not a dynamic
 * import of the packages there: mime-types is CommonJS, and a bundled dynamic import of it
 * exposes only its default export.
 */
export { fileTypeFromBuffer } from 'file-type';
