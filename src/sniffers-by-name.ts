/** mime-types, for src/mime.ts's fallback by file name (see src/sniffers.ts). */
export { default as mime } from 'mime-types';
