import { BlockList, isIP } from 'node:net';

/**
 * The rules that keep `extract serve` and `extract listen` for the pages of this machine only,
 * though any web page the user opens can send requests to 127.0.0.1. Pure functions over header
 * values; each server applies them in one hook.
 *
 * - DNS rebinding: a page of evil.example whose name is re-pointed at 127.0.0.1 can read our
 *   answers, but its requests still carry `Host: evil.example`. Only loopback names, IP
 *   literals (which cannot be rebound) and the host the server was bound to are taken.
 * - Cross-origin writes: a page may POST a form or a `no-cors` fetch here without asking. Browsers
 *   mark such requests with `Origin` and `Sec-Fetch-Site`; a write from another origin is refused.
 */

const LOOPBACK = new BlockList();
LOOPBACK.addSubnet('127.0.0.0', 8, 'ipv4');
LOOPBACK.addAddress('::1', 'ipv6');

/**
 * Whether a --host to bind is one only this machine can reach (127.0.0.0/8, ::1, localhost);
 * anything else earns `serve` and `listen` a warning.
 */
export function isLoopbackHost(host: string): boolean {
  const name = host.toLowerCase().replace(/^\[(.*)\]$/, '$1');
  if (name === 'localhost') return true;
  const family = isIP(name);
  return family !== 0 && LOOPBACK.check(name, family === 4 ? 'ipv4' : 'ipv6');
}

/** Why this Host header is refused, or null when it names this machine. */
export function hostProblem(hostHeader: string | undefined, boundHost: string): string | null {
  // HTTP/1.0 clients may send none; no browser does.
  if (hostHeader === undefined || hostHeader === '') return null;
  const name = hostnameOf(hostHeader);
  if (name === null) return `the Host header ${JSON.stringify(hostHeader.slice(0, 80))} is not a host name`;
  if (isAllowedName(name, boundHost)) return null;
  return `the Host header names ${JSON.stringify(name.slice(0, 80))}, not this machine (a DNS-rebinding page?): use http://127.0.0.1 or http://localhost`;
}

/** Why a write with these headers is refused as cross-origin, or null when it is same-origin or not from a browser page. */
export function crossOriginProblem(input: {
  method: string;
  origin: string | undefined;
  secFetchSite: string | undefined;
  host: string | undefined;
}): string | null {
  if (input.method === 'GET' || input.method === 'HEAD' || input.method === 'OPTIONS') return null;
  const site = input.secFetchSite?.toLowerCase();
  if (site !== undefined && site !== 'same-origin' && site !== 'none') {
    return `a ${site} page may not write here (Sec-Fetch-Site: ${site}): use the application served by this server, or a client outside the browser`;
  }
  if (input.origin === undefined) return null;
  if (input.origin === 'null') return 'a page with an opaque origin (Origin: null) may not write here';
  let origin: URL;
  try {
    origin = new URL(input.origin);
  } catch {
    return 'the Origin header is not a URL';
  }
  if (input.host !== undefined && origin.host.toLowerCase() === input.host.toLowerCase()) return null;
  return `a page of ${origin.origin} may not write here (another origin): use the application served by this server, or a client outside the browser`;
}

/** The host name of a Host header: lower case, without port or IPv6 brackets; null when malformed. */
function hostnameOf(hostHeader: string): string | null {
  const value = hostHeader.trim().toLowerCase();
  if (value.startsWith('[')) {
    const end = value.indexOf(']');
    return end > 1 ? value.slice(1, end) : null;
  }
  const name = value.replace(/:\d*$/, '');
  return /^[a-z0-9.-]+$/.test(name) ? name : null;
}

function isAllowedName(name: string, boundHost: string): boolean {
  const bound = boundHost.toLowerCase().replace(/^\[|\]$/g, '');
  if (name === bound) return true;
  if (name === 'localhost' || name.endsWith('.localhost')) return true;
  // An IP literal cannot be rebound: a page whose origin is an IP was served by that address.
  return isIP(name) !== 0;
}
