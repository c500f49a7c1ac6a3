/**
 * The limit for row 6: a bare node:http server that answers every request with the same
 * bytes the emulator's GET documents/{id} answers, and nothing else. Prints its URL.
 * usage: node bare-server.ts BODY_FILE
 */
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';

const file = process.argv[2];
if (!file) throw new Error('usage: bare-server.ts BODY_FILE');
const body = readFileSync(file);
const server = createServer((req, res) => {
  req.resume();
  res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': body.length });
  res.end(body);
});
server.keepAliveTimeout = 30_000;
server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  process.stdout.write(`Listening on http://127.0.0.1:${address.port}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
