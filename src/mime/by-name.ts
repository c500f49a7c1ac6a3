/** mime-types, for detect.ts's fallback by file name (see by-content.ts). */
export { default as mime } from 'mime-types';
