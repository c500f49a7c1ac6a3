import { execFileSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * A throwaway PostgreSQL server for tests: Debian's `postgresql` package (npm test's pretest, scripts/pretest.sh, installs it),
 * initdb in a temp dir, pg_ctl on a free port of 127.0.0.1 with password authentication (so
 * the tests can check the password never shows). As root, it runs as the `postgres` user,
 * since PostgreSQL refuses to run as root. Each test takes its own database (`database()`).
 */

export const PG_USER = 'extract_test';
export const PG_PASSWORD = 'PG_secret_password_7c1d9e';

export type PgServer = {
  port: number;
  /** PgBouncer in transaction mode in front of this server (Debian's pgbouncer); returns a URL of `db` through it. */
  bouncer(db: string): Promise<string>;
  /** postgres://user:password@127.0.0.1:port/<db> */
  url(db?: string): string;
  /** A new empty database; returns its URL. */
  database(): Promise<string>;
  /** `pg_ctl stop -m immediate` (a crash: no checkpoint), for restart tests. */
  crash(): void;
  start(): void;
  stop(): void;
};

function binDir(): string {
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root) ? readdirSync(root).filter((v) => existsSync(join(root, v, 'bin', 'initdb'))) : [];
  versions.sort((a, b) => Number(b) - Number(a));
  if (versions[0] === undefined)
    throw new Error(
      "PostgreSQL is not installed: apt-get install -y postgresql (npm test's pretest does it: scripts/pretest.sh)",
    );
  return join(root, versions[0], 'bin');
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const address = s.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      s.close(() => resolve(port));
    });
  });
}

/** `durable`: fsync on (the bench's cost of a fact); tests run with fsync off, which a crash of the process alone does not need. */
export async function startPostgres(options: { durable?: boolean } = {}): Promise<PgServer> {
  const bin = binDir();
  const asRoot = process.getuid?.() === 0;
  const dir = mkdtempSync(join(tmpdir(), 'extract-pg-'));
  const data = join(dir, 'data');
  const pwfile = join(dir, 'pw');
  writeFileSync(pwfile, `${PG_PASSWORD}\n`);
  if (asRoot) {
    const uid = Number(execFileSync('id', ['-u', 'postgres']).toString().trim());
    const gid = Number(execFileSync('id', ['-g', 'postgres']).toString().trim());
    chownSync(dir, uid, gid);
    chownSync(pwfile, uid, gid);
  }
  const run = (cmd: string, args: string[]): void => {
    const file = join(bin, cmd);
    if (asRoot) execFileSync('runuser', ['-u', 'postgres', '--', file, ...args], { stdio: 'pipe' });
    else execFileSync(file, args, { stdio: 'pipe' });
  };
  run('initdb', ['-D', data, '-U', PG_USER, `--pwfile=${pwfile}`, '-A', 'scram-sha-256', '--no-sync', '-E', 'UTF8']);
  const port = await freePort();
  const settings = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=${options.durable === true ? 'on' : 'off'} -c max_connections=100`;
  const start = (): void =>
    run('pg_ctl', ['-D', data, '-l', join(dir, 'log'), '-w', '-t', '30', '-o', settings, 'start']);
  start();
  const url = (db = 'postgres'): string => `postgres://${PG_USER}:${PG_PASSWORD}@127.0.0.1:${port}/${db}`;
  let n = 0;
  const bouncers: Array<() => void> = [];
  const server: PgServer = {
    port,
    async bouncer(db) {
      const bport = await freePort();
      const ini = join(dir, `pgbouncer-${bport}.ini`);
      const users = join(dir, `userlist-${bport}.txt`);
      writeFileSync(users, `"${PG_USER}" "${PG_PASSWORD}"\n`);
      writeFileSync(
        ini,
        [
          '[databases]',
          `${db} = host=127.0.0.1 port=${port} dbname=${db}`,
          '[pgbouncer]',
          'listen_addr = 127.0.0.1',
          `listen_port = ${bport}`,
          `unix_socket_dir = ${dir}`,
          'auth_type = plain',
          `auth_file = ${users}`,
          'pool_mode = transaction',
          'default_pool_size = 4',
          'max_client_conn = 200',
          `logfile = ${join(dir, `pgbouncer-${bport}.log`)}`,
          `pidfile = ${join(dir, `pgbouncer-${bport}.pid`)}`,
          '',
        ].join('\n'),
      );
      if (asRoot) {
        const uid = Number(execFileSync('id', ['-u', 'postgres']).toString().trim());
        const gid = Number(execFileSync('id', ['-g', 'postgres']).toString().trim());
        chownSync(ini, uid, gid);
        chownSync(users, uid, gid);
      }
      const cmd = asRoot ? ['runuser', '-u', 'postgres', '--', 'pgbouncer', '-d', ini] : ['pgbouncer', '-d', ini];
      execFileSync(cmd[0]!, cmd.slice(1), { stdio: 'pipe' });
      bouncers.push(() => {
        try {
          const pid = Number(readFileSync(join(dir, `pgbouncer-${bport}.pid`), 'utf8').trim());
          process.kill(pid, 'SIGTERM');
        } catch {
          // gone already
        }
      });
      // -d returns once it daemonised; wait until it accepts connections.
      const { default: pg } = await import('pg');
      const url = `postgres://${PG_USER}:${PG_PASSWORD}@127.0.0.1:${bport}/${db}`;
      for (let i = 0; ; i++) {
        const client = new pg.Client({ connectionString: url });
        try {
          await client.connect();
          await client.end();
          return url;
        } catch (err) {
          await client.end().catch(() => undefined);
          if (i > 50) throw err;
          await new Promise((r) => setTimeout(r, 100));
        }
      }
    },
    url,
    async database() {
      const name = `t${process.pid}_${++n}`;
      const { default: pg } = await import('pg');
      const client = new pg.Client({ connectionString: url() });
      await client.connect();
      try {
        await client.query(`CREATE DATABASE ${name}`);
      } finally {
        await client.end();
      }
      return url(name);
    },
    crash: () => run('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']),
    start,
    stop: () => {
      for (const b of bouncers) b();
      try {
        run('pg_ctl', ['-D', data, '-m', 'fast', '-w', 'stop']);
      } catch {
        // already stopped
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
  return server;
}
