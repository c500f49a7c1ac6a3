import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

/** How many connections a server keeps open, and for how long (defaults: contract/constants.ts CONNECTION_DEFAULTS). */
export type ConnectionLimits = { maxConnections: number; idleTimeoutMs: number; headersTimeoutMs: number };

/**
 * Bounds the connections of an HTTP server (serve's and listen's alike), so idle sockets
 * cannot use up the process's file descriptors:
 * - a connection idle between requests (keep-alive) is closed after `idleTimeoutMs`; headers
 *   must arrive within `headersTimeoutMs`;
 * - at most `maxConnections` are open: a new one over the cap first makes room by closing the
 *   connection idle longest (one with no request in progress); when every one is busy, the new
 *   one is answered `503` with `Connection: close` and a JSON body saying why, and the refusal is
 *   logged (node's own server.maxConnections closes silently, which nobody can diagnose).
 */

/**
 * The http:// address a listening server answers on: the port it got (for port 0), an IPv6 host
 * in brackets; the port asked for when the server says none (not listening on TCP).
 */
export function listeningUrl(server: Server, host: string, asked: number): string {
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : asked;
  return `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
}

const REFUSED_BODY = (max: number) =>
  JSON.stringify({
    success: false,
    error: `too many connections open (the limit is ${max}, every one busy): try again shortly, or reuse a keep-alive connection`,
  });

type Handler = (request: IncomingMessage, response: ServerResponse) => void;

/** A Fastify `serverFactory`: the HTTP server, bounded as above, handing accepted requests to `handler`. */
export function boundedServer(limits: ConnectionLimits, log: (line: string) => void) {
  return (handler: Handler): Server => {
    const refused = new WeakSet<Socket>();
    // Connections in the order they opened, each with its latest request (see boundConnections).
    const open = new Map<Socket, Connection>();
    let requests = 0;
    const server = createServer((request, response) => {
      const state = open.get(request.socket);
      if (state !== undefined) {
        state.response = response;
        state.used = ++requests;
        return handler(request, response);
      }
      if (!refused.has(request.socket)) return handler(request, response);
      const body = REFUSED_BODY(limits.maxConnections);
      response.writeHead(503, {
        connection: 'close',
        'retry-after': '1',
        'content-type': 'application/json',
        'content-length': Buffer.byteLength(body),
      });
      response.end(body);
    });
    boundConnections(server, limits, log, refused, open);
    return server;
  };
}

/**
 * An open connection: its latest request's response (none yet: idle) and when that request came
 * (a count of requests). Kept by the request handler with two assignments, not a listener per
 * request: a read of a polled document pays nothing more (`npm run bench` row 6); the connection
 * to close is looked for only when the cap is reached.
 */
type Connection = { response: ServerResponse | undefined; used: number };

function boundConnections(
  server: Server,
  limits: ConnectionLimits,
  log: (line: string) => void,
  refused: WeakSet<Socket>,
  open: Map<Socket, Connection>,
): void {
  server.keepAliveTimeout = limits.idleTimeoutMs;
  server.headersTimeout = limits.headersTimeoutMs;
  // No bound on the whole request, as Fastify's own server has none: a 1 GB upload may take its
  // time. (A sender that stalls mid-body keeps its connection: it counts against the cap, busy.)
  server.requestTimeout = 0;
  let lastLog = 0;
  let quiet = 0;
  const say = (line: string) => {
    // One line a second at most: a flood of sockets must not flood the log too.
    const now = Date.now();
    if (now - lastLog < 1000) {
      quiet++;
      return;
    }
    log(quiet > 0 ? `${line} (and ${quiet} more since the last line)` : line);
    lastLog = now;
    quiet = 0;
  };
  /** The connection with no request in progress whose last request is oldest (never used counts oldest). */
  const idleLongest = (): Socket | undefined => {
    let found: Socket | undefined;
    let oldest = Number.POSITIVE_INFINITY;
    for (const [socket, state] of open) {
      // A request is in progress until its response is done and gone (closed).
      const busy = state.response !== undefined && !state.response.closed;
      if (!busy && state.used < oldest) {
        found = socket;
        oldest = state.used;
      }
    }
    return found;
  };
  server.on('connection', (socket: Socket) => {
    if (open.size >= limits.maxConnections) {
      const idle = idleLongest();
      if (idle) {
        open.delete(idle);
        idle.destroy();
        say(`connections: ${limits.maxConnections} open, the limit: closed the one idle longest to make room`);
      } else {
        // Answered 503 by the request handler above, then closed; one that sends nothing is cut in a second.
        refused.add(socket);
        socket.setTimeout(1000, () => socket.destroy());
        say(`connections: ${limits.maxConnections} open and busy, the limit: refused a new one with 503`);
        return;
      }
    }
    open.set(socket, { response: undefined, used: 0 });
    socket.once('close', () => open.delete(socket));
  });
}
