// extract-cli's engine: this package holds the heavy dependencies of `extract serve` and `--local`
// (pdfjs, canvas, OCR and its language data, the emulator's uploads, static files and SMTP).
// extract-cli loads them through these two functions, so that they resolve from this folder, where
// npm installed them, whether or not npm hoisted them beside extract-cli.
export const load = (specifier) => import(specifier);
export const resolve = (specifier) => import.meta.resolve(specifier);
