// The embedded PostgreSQL under faults, with the server from its bundle, or through `npm start` where a
// test says so (its own DATA_DIR):
// paused and resumed, its postmaster killed, left behind by a server that was killed, and the whole
// thing stopped by SIGTERM to npm. Requests never hang past DB_TIMEOUT_MS, the server never leaves a
// PostgreSQL of its DATA_DIR behind, and a start over an orphaned one proceeds.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { connect as tcpConnect, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serverArgs } from '../support/program.js';

const DB_TIMEOUT_MS = 1500;
/** Far past every bound under test: a request still open by then hangs. */
const HANG_MS = 15_000;

let dataDir: string;
const pgdata = () => join(dataDir, 'postgres', 'pgdata');

interface Server {
  child: ChildProcess;
  baseUrl: string;
  port: number;
  output: () => string;
  exited: Promise<number | null>;
}

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

async function startServer(options: { npm?: boolean; env?: Record<string, string> } = {}): Promise<Server> {
  const port = await freePort();
  const env = {
    ...process.env,
    PORT: String(port),
    DATA_DIR: dataDir,
    DATABASE_URL: '',
    NODE_ENV: 'test',
    LOG_LEVEL: 'info',
    DB_TIMEOUT_MS: String(DB_TIMEOUT_MS),
    ...options.env,
  };
  const child = options.npm
    ? spawn('npm', ['start', '--silent'], { env, stdio: ['ignore', 'pipe', 'pipe'] })
    : spawn(process.execPath, await serverArgs(), { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  await new Promise<void>((resolve, reject) => {
    const check = setInterval(() => {
      if (/control plane listening/.test(out)) {
        clearInterval(check);
        resolve();
      }
    }, 50);
    void exited.then((code) => {
      clearInterval(check);
      reject(new Error(`server exited ${code}: ${out}`));
    });
  });
  return { child, port, baseUrl: `http://127.0.0.1:${port}`, output: () => out, exited };
}

async function postmasterPid(): Promise<number> {
  return Number((await readFile(join(pgdata(), 'postmaster.pid'), 'utf8')).split('\n')[0]);
}

/** Every live process of this DATA_DIR's cluster: the postmaster (its -D) and its children. */
async function clusterProcesses(): Promise<number[]> {
  const pids: number[] = [];
  const postmasters = new Set<number>();
  const parents = new Map<number, number>();
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmd = (await readFile(`/proc/${entry}/cmdline`, 'utf8')).split('\0');
      const stat = await readFile(`/proc/${entry}/stat`, 'utf8');
      if (stat.replace(/^.*\) /s, '').startsWith('Z')) continue; // a zombie is dead
      parents.set(Number(entry), Number(stat.replace(/^.*\) /s, '').split(' ')[1]));
      if (cmd.includes('-D') && cmd[cmd.indexOf('-D') + 1] === pgdata()) postmasters.add(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  for (const [pid, parent] of parents) if (postmasters.has(pid) || postmasters.has(parent)) pids.push(pid);
  return pids;
}

/** Pids of `parent`'s child processes whose command line holds `needle` (from /proc). */
function childrenRunning(parent: number, needle: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === parent && readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes(needle))
        pids.push(Number(entry));
    } catch {
      // Gone meanwhile.
    }
  }
  return pids;
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

async function until<T>(what: string, fn: () => Promise<T | null | false>, ms = 60_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await fn().catch(() => null);
    if (v !== null && v !== false) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function ready(server: Server): Promise<number> {
  return (await fetch(`${server.baseUrl}/readyz`, { signal: AbortSignal.timeout(HANG_MS) })).status;
}

/** A database-backed request: an API token is looked up in the database (unknown: 401). */
async function tokenLookup(
  server: Server,
): Promise<{ status: number; code: string; retryAfter: string | null }> {
  const res = await fetch(`${server.baseUrl}/api/v2/me`, {
    headers: { authorization: `Bearer svc_pat_${randomUUID()}_${'a'.repeat(43)}` },
    signal: AbortSignal.timeout(HANG_MS),
  });
  return {
    status: res.status,
    code: ((await res.json()) as { code: string }).code,
    retryAfter: res.headers.get('retry-after'),
  };
}

async function sigterm(server: Server): Promise<number | null> {
  server.child.kill('SIGTERM');
  return server.exited;
}

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'svc-faults-'));
});
afterAll(async () => {
  for (const pid of await clusterProcesses().catch(() => [])) process.kill(pid, 'SIGKILL');
  await rm(dataDir, { recursive: true, force: true });
});

describe('the embedded PostgreSQL under faults', () => {
  it('paused (SIGSTOP): requests answer 503 within the timeout and /readyz 503; resumed: it recovers by itself', async () => {
    const server = await startServer({ env: { WORKER: 'off' } });
    try {
      expect(await ready(server)).toBe(200);
      expect((await tokenLookup(server)).status).toBe(401);
      const pids = await clusterProcesses();
      expect(pids.length).toBeGreaterThan(1);
      for (const pid of pids) process.kill(pid, 'SIGSTOP');
      try {
        expect(await ready(server)).toBe(503);
        const during = await Promise.all(Array.from({ length: 20 }, () => tokenLookup(server)));
        for (const r of during) {
          expect(r.status).toBe(503);
          expect(r.code).toBe('service-unavailable');
          expect(Number(r.retryAfter)).toBeGreaterThanOrEqual(1);
        }
      } finally {
        for (const pid of pids) process.kill(pid, 'SIGCONT');
      }
      await until('ready again', async () => (await ready(server)) === 200);
      expect((await tokenLookup(server)).status).toBe(401);
      expect(server.output()).not.toMatch(/"level":(50|60)/);
    } finally {
      expect(await sigterm(server)).toBe(0);
    }
    expect(await clusterProcesses()).toEqual([]);
  }, 180_000);

  it('postmaster killed (-9): restarted on the same data, no request hangs, nothing left after the stop', async () => {
    const server = await startServer();
    try {
      const before = await postmasterPid();
      process.kill(before, 'SIGKILL');
      // Requests meanwhile fail fast (503) or already succeed; none hangs.
      const during = await Promise.all(Array.from({ length: 10 }, () => tokenLookup(server)));
      for (const r of during) expect([401, 503]).toContain(r.status);
      await until('restarted', async () => (await ready(server)) === 200);
      expect((await tokenLookup(server)).status).toBe(401);
      const after = await postmasterPid();
      expect(after).not.toBe(before);
      expect(alive(before)).toBe(false);
      expect(server.output()).toMatch(/embedded PostgreSQL started again/);
      expect(server.child.exitCode).toBeNull();
    } finally {
      expect(await sigterm(server)).toBe(0);
    }
    expect(server.output()).toMatch(/"msg":"stopped"/);
    expect(await clusterProcesses()).toEqual([]);
  }, 180_000);

  it('a start over a PostgreSQL left by a killed server stops it and proceeds; the edge child went with it', async () => {
    const first = await startServer({ env: { WORKER: 'off', EDGE: 'on' } });
    const orphan = await postmasterPid();
    const edge = await until(
      'the edge child',
      async () => childrenRunning(first.child.pid!, 'edge-main')[0] ?? null,
    );
    first.child.kill('SIGKILL');
    await first.exited;
    // The crash left the cluster running, as a crashed server does; its edge saw its stdin close and ended.
    expect(alive(orphan)).toBe(true);
    await until('the edge child gone', async () => !alive(edge), 15_000);
    const second = await startServer({ env: { WORKER: 'off' } });
    try {
      expect(alive(orphan)).toBe(false);
      expect(await postmasterPid()).not.toBe(orphan);
      expect(await ready(second)).toBe(200);
    } finally {
      expect(await sigterm(second)).toBe(0);
    }
    expect(await clusterProcesses()).toEqual([]);
  }, 180_000);

  it('SIGTERM to the `npm start` process stops the server and the embedded PostgreSQL', async () => {
    const server = await startServer({ npm: true, env: { WORKER: 'off' } });
    const postmaster = await postmasterPid();
    expect(await ready(server)).toBe(200);
    server.child.kill('SIGTERM'); // npm's own pid, as systemd or a container runtime sends it
    await server.exited;
    await until(
      'the server gone',
      async () => (await clusterProcesses()).length === 0 && !alive(postmaster),
      30_000,
    );
    const refused = await new Promise<boolean>((resolve) => {
      const s = tcpConnect(server.port, '127.0.0.1');
      s.once('connect', () => (s.destroy(), resolve(false)));
      s.once('error', () => resolve(true));
    });
    expect(refused).toBe(true);
    expect(server.output()).toMatch(/"msg":"stopped"/);
  }, 180_000);
});
