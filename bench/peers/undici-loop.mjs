/**
 * The limit of Node's HTTP stack for row 2: the same requests the CLI sends for each small
 * file (POST extract inline; then GET documents/{id} when the answer has no page_count, as
 * the CLI does) with undici and nothing else: no hashing, no journal, no outputs.
 * Plain JavaScript, not TypeScript: Node's type stripping costs some 60 ms of CPU at start-up,
 * which the CLI (a bundle of JavaScript) does not pay.
 * usage: node undici-loop.mjs URL KEY CONCURRENCY LIST   (LIST: one path a line)
 */
import { readFile } from 'node:fs/promises';
import { basename } from 'node:path';
import { request } from 'undici';

const [url, key, concurrencyText, list] = process.argv.slice(2);
if (!url || !key || !concurrencyText || !list) throw new Error('usage: undici-loop.mjs URL KEY CONCURRENCY LIST');
const files = (await readFile(list, 'utf8')).split('\n').filter((l) => l !== '');
const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json', accept: 'application/json' };
let next = 0;
let ok = 0;

/** @returns {Promise<void>} */
async function worker() {
  while (next < files.length) {
    const file = files[next++];
    if (file === undefined) break;
    const data = (await readFile(file)).toString('base64');
    const res = await request(`${url}/api/v1/extract`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ file: { data, name: basename(file), type: 'application/pdf' } }),
    });
    const answer = await res.body.json();
    if (res.statusCode !== 200 || typeof answer !== 'object' || answer === null) continue;
    const id = Reflect.get(answer, 'document_id');
    if (typeof Reflect.get(answer, 'page_count') !== 'number' && typeof id === 'string') {
      const doc = await request(`${url}/api/v1/documents/${id}`, {
        headers: { authorization: headers.authorization, accept: 'application/json' },
      });
      await doc.body.json();
    }
    ok++;
  }
}

await Promise.all(Array.from({ length: Number(concurrencyText) }, worker));
process.stdout.write(`${ok}\n`);
