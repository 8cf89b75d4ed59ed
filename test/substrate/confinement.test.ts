// Every program a customer runs is confined (issue 37; DECISIONS.md §8 "Confinement";
// server/src/substrate/local/sandbox/): the attacks an outside probe made on the embedded default, as
// tests. Four products run side by side on the local substrate: a block game, an arena game (Debian's
// ioq3ded), a web app and a VPS (OpenSSH's sshd). Read from the host's /proc, each program runs as an
// unprivileged id of its volume's own range, in user, mount, PID and network namespaces of its own; a
// game library dropped into the arena's files runs as that id, and cannot reach the host's files or the
// encryption key; links planted in the block game's volume lead nowhere outside it, whatever the game
// writes through them; from inside every product, neither the host's services nor another unit answer.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import {
  mkdir,
  mkdtemp,
  readdir,
  readFile,
  readlink,
  rm,
  stat,
  symlink,
  unlink,
  writeFile,
} from 'node:fs/promises';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { confinementProblem } from '../../server/src/substrate/local/sandbox/index.js';
import { staffMember } from '../admin-content/staff.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { randomPortPool, startTestEdge, type TestEdge } from '../support/edge.js';
import { signedIn, type Caller } from '../support/organizations.js';
import { awaitOperation, provisionService, type Provisioned } from '../support/services.js';
import { startTestSmtp, type TestSmtp } from '../support/smtp.js';
import { eventually, orNull, processesOfVolume } from './drivers.js';

const PROBLEM = confinementProblem();
const HAS_CC = existsSync('/usr/bin/cc') || existsSync('/usr/bin/gcc');
const HAS_IOQ3 = existsSync('/usr/lib/ioquake3/ioq3ded');

let app: TestApp;
let smtp: TestSmtp;
let edge: TestEdge;
let owner: Caller;
let game: Provisioned;
let arena: Provisioned;
let web: Provisioned;
let vps: Provisioned;
let canaryDir: string;
let hostListener: net.Server;
let hostPort: number;

const volumeOf = (p: Provisioned) => join(app.substrateDir, 'volumes', p.volumeResourceId);

beforeAll(async () => {
  if (PROBLEM) return;
  smtp = await startTestSmtp();
  app = await startTestApp({
    env: { SMTP_URL: smtp.url, SOURCE_RATE_LIMIT_SCALE: '1000', PORT_POOL: randomPortPool(8) },
  });
  edge = await startTestEdge(app);
  const staff = await staffMember(app, smtp, 'cf-staff', ['manage_services']);
  owner = await signedIn(app, smtp, 'cf-owner');
  const orgId = (
    await owner.api.organizationCreate({
      body: { name: 'Confined', slug: `confined-${Date.now().toString(36)}` },
    })
  ).id;
  const projectId = (
    await owner.api.projectCreate({ path: { id: orgId }, body: { name: 'Confined', slug: 'confined' } })
  ).id;
  [game, arena, web, vps] = await Promise.all([
    provisionService(staff.elevated, { projectId, productSlug: 'block-game', name: 'Game' }),
    provisionService(staff.elevated, { projectId, productSlug: 'arena-game', name: 'Arena' }),
    provisionService(staff.elevated, { projectId, productSlug: 'web-app', name: 'Site' }),
    provisionService(staff.elevated, { projectId, productSlug: 'vps-small', name: 'Box' }),
  ]);
  canaryDir = await mkdtemp(join(tmpdir(), 'svc-canary-'));
  // A host service on every address (as a host's sshd or a database might be): a unit must not reach it.
  hostListener = net.createServer((s) => s.on('error', () => undefined).end('host\n'));
  await new Promise<void>((resolve) => hostListener.listen(0, '0.0.0.0', resolve));
  hostPort = (hostListener.address() as net.AddressInfo).port;
}, 240_000);

afterAll(async () => {
  hostListener?.close();
  if (canaryDir) await rm(canaryDir, { recursive: true, force: true });
  await edge?.stop();
  await app?.close();
  await smtp?.close();
});

async function unitAddress(p: Provisioned): Promise<string> {
  const [row] = await app.sql<{ address: string }[]>`
    select host(address) as address from service_resources where id = ${p.primaryResourceId}`;
  return row!.address;
}

async function restart(p: Provisioned): Promise<void> {
  const { operation_id } = await owner.api.serviceInstancePower({
    path: { id: p.serviceInstanceId },
    body: { action: 'restart' },
  });
  expect((await awaitOperation(owner.api, p.serviceInstanceId, operation_id)).status).toBe('succeeded');
}

/** Runs a bash script in a shell of the unit (as the gateway's shell sessions run); answers its output. */
async function inUnit(p: Provisioned, script: string): Promise<string> {
  const shell = await app.substrate!.openShell(p.primaryResourceId, ['bash'], { columns: 200, rows: 50 });
  if (!shell) throw new Error('the unit offers no shell');
  let out = '';
  shell.onData((d) => (out += d.toString()));
  await new Promise<number>((resolve) => {
    shell.onExit(resolve);
    shell.write(Buffer.from(`${script.replace(/\n/g, '; ')}; exit 0\n`));
  });
  return out;
}

/** From inside the unit: what a TCP connection to each target met (connected, refused or timeout). */
async function reachFrom(p: Provisioned, targets: [string, number][]): Promise<string[]> {
  const script = targets
    .map(
      ([host, port]) =>
        `timeout 3 bash -c 'exec 3<>/dev/tcp/${host}/${port}' 2>/dev/null; r=$?; if [ $r -eq 0 ]; then echo R""EACH:connected; elif [ $r -eq 124 ]; then echo R""EACH:timeout; else echo R""EACH:refused; fi`,
    )
    .join('\n');
  const out = await inUnit(p, script);
  return [...out.matchAll(/REACH:(\w+)/g)].map((m) => m[1]!);
}

describe.skipIf(PROBLEM !== null)(`confinement on the local substrate (${PROBLEM ?? 'confinable'})`, () => {
  it('runs every program as an unprivileged id of its volume, in namespaces of its own', async () => {
    const hostNs = async (kind: string) => readlink(`/proc/self/ns/${kind}`);
    const products = HAS_IOQ3 ? [game, arena, web, vps] : [game, web, vps];
    const expected = new Map([
      [game, 'node'],
      [web, 'node'],
      [vps, 'sshd'],
      [arena, 'ioq3ded'],
    ]);
    const bases = new Set<number>();
    for (const p of products) {
      const volume = volumeOf(p);
      const base = (await stat(volume)).uid;
      expect(base).toBeGreaterThanOrEqual(2 ** 20);
      bases.add(base);
      // Read once no launch is under way: a program may still be starting when its operation ends (the
      // launcher is setpriv for a moment before it becomes bwrap; bwrap's child has no id map until the
      // agent writes it), and a product may start a second program (a machine's screen) meanwhile.
      const processes = await eventually(
        `the programs of ${p.serviceInstanceId}, none of them starting`,
        async () => {
          const found = await processesOfVolume(volume);
          if (!found.some((f) => f.comm === expected.get(p))) return undefined;
          for (const { pid, comm } of found) {
            const inHost =
              (await readlink(`/proc/${pid}/ns/user`).catch(() => '')) === (await hostNs('user'));
            const map = await readFile(`/proc/${pid}/uid_map`, 'utf8').catch(() => '');
            if ((inHost && comm !== 'bwrap') || (!inHost && map.trim() === '')) return undefined;
          }
          return found;
        },
        30_000,
      );
      let confined = 0;
      for (const { pid, uid, comm } of processes) {
        expect(uid).not.toBe(0);
        // Read together; a process that has ended since the listing (a program's short-lived child) has
        // nothing left to check.
        const seen = await orNull(
          Promise.all([
            readlink(`/proc/${pid}/ns/user`),
            readFile(`/proc/${pid}/uid_map`, 'utf8'),
            ...['mnt', 'pid', 'net'].map((kind) => readlink(`/proc/${pid}/ns/${kind}`)),
          ]),
        );
        if (!seen) continue;
        const [user, uidMap, ...others] = seen;
        // The launcher (bwrap, outside, as the unit's id) is the one process in the host's namespaces.
        if (user === (await hostNs('user'))) {
          expect(comm).toBe('bwrap');
          continue;
        }
        expect(uidMap.trim().split(/\s+/).map(Number)).toEqual([0, base, 65_536]);
        for (const [i, kind] of ['mnt', 'pid', 'net'].entries())
          expect(others[i]).not.toBe(await hostNs(kind));
        confined += 1;
      }
      expect(confined).toBeGreaterThan(0);
    }
    // Each volume has a range of its own.
    expect(bases.size).toBe(products.length);
    // No process of the host runs as root inside any volume.
    for (const name of await readdir('/proc')) {
      if (!/^\d+$/.test(name)) continue;
      const cwd = await readlink(`/proc/${name}/cwd`).catch(() => '');
      const status = await readFile(`/proc/${name}/status`, 'utf8').catch(() => '');
      const uid = Number(/^Uid:\s+(\d+)/m.exec(status)?.[1]);
      if (cwd.startsWith(join(app.substrateDir, 'volumes')))
        expect({ pid: name, uid }).not.toMatchObject({ uid: 0 });
    }
  }, 120_000);

  it('reaches neither the host nor another unit from inside any product', async () => {
    const dbPort = Number(new URL(app.databaseUrl).port);
    const rcon = await unitAddress(game);
    const targets: [string, number][] = [
      ['127.0.0.1', Number(new URL(app.baseUrl).port)],
      ['127.0.0.1', dbPort],
      ['127.0.0.1', hostPort],
      ['169.254.1.1', hostPort],
      [rcon, 25575],
    ];
    // From the host, the game's RCON answers (the platform reaches it) and so does the host's listener.
    const reachable = (host: string, port: number) =>
      new Promise<boolean>((resolve) => {
        const s = net.connect({ host, port }, () => (s.destroy(), resolve(true)));
        s.on('error', () => resolve(false));
      });
    await eventually(
      "the game's RCON",
      async () => ((await reachable(rcon, 25575)) ? true : undefined),
      30_000,
    );
    expect(await reachable('127.0.0.1', hostPort)).toBe(true);
    for (const p of [web, vps, ...(HAS_IOQ3 ? [arena] : [])]) {
      const seen = await reachFrom(p, targets);
      expect(seen).toHaveLength(targets.length);
      expect(seen.filter((s) => s === 'connected')).toEqual([]);
    }
    // The unit's own programs answer on its own address from inside it.
    expect(await reachFrom(web, [[await unitAddress(web), 8080]])).toEqual(['connected']);
  }, 120_000);

  it("writes what a planted link names inside the volume, never on the host's files", async () => {
    const volume = volumeOf(game);
    const target = join(canaryDir, 'ops-target');
    const logsTarget = join(canaryDir, 'logs-target');
    await writeFile(target, 'canary\n');
    await rm(join(canaryDir, 'logs-target'), { recursive: true, force: true });
    await mkdir(logsTarget);
    // As the game's own shell would: ops.json a link to a host file, logs/ a link to a host directory.
    await rm(join(volume, 'ops.json'), { force: true });
    await symlink(target, join(volume, 'ops.json'));
    await rm(join(volume, 'logs'), { recursive: true, force: true });
    await symlink(logsTarget, join(volume, 'logs'));
    // The game writes ops.json through the link: inside its confinement the link's target does not
    // exist, so the action may fail; what matters is where the bytes could go.
    await owner.api
      .gameActionRun({ path: { id: game.serviceInstanceId }, body: { kind: 'op', name: 'Mallory' } })
      .catch(() => undefined);
    await restart(game);
    // The restarted game opens its logs (vanilla's next log names) through the planted directory link.
    await eventually('the game started again', async () =>
      (await processesOfVolume(volume)).some((p) => p.comm === 'node') ? true : undefined,
    );
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    expect(await readFile(target, 'utf8')).toBe('canary\n');
    expect(await readdir(logsTarget)).toEqual([]);
  }, 120_000);

  it.skipIf(!HAS_CC || !HAS_IOQ3)(
    "runs a game library uploaded into the arena's files as the unit, never reaching the host",
    async () => {
      const volume = volumeOf(arena);
      const key = join(app.config.dataDir, 'encryption.key');
      const canary = join(canaryDir, 'pwned');
      const source = join(canaryDir, 'evil.c');
      // The probe's library: at load it writes who it is, tries the host's files, and copies the key.
      await writeFile(
        source,
        `#include <stdio.h>
#include <unistd.h>
__attribute__((constructor)) static void evil(void) {
  FILE *f = fopen("/evil-uid", "w"); if (f) { fprintf(f, "%d\\n", getuid()); fclose(f); }
  FILE *c = fopen("${canary}", "w"); if (c) { fputs("pwned\\n", c); fclose(c); }
  FILE *k = fopen("${key}", "r"); FILE *o = fopen("/evil-leak", "w");
  if (o) { if (k) { char b[256]; size_t n = fread(b, 1, sizeof b, k); fwrite(b, 1, n, o); } else fputs("none\\n", o); fclose(o); }
}
`,
      );
      const library = join(volume, '.arena', 'base', 'arena', 'qagamex86_64.so');
      await unlink(library);
      execFileSync('cc', ['-shared', '-fPIC', '-o', library, source]);
      await restart(arena);
      const uidFile = join(volume, 'evil-uid');
      await eventually('the library loaded', async () => (existsSync(uidFile) ? true : undefined), 30_000);
      // It ran, as root inside: an unprivileged id of the host, its volume's first.
      expect((await readFile(uidFile, 'utf8')).trim()).toBe('0');
      expect((await stat(uidFile)).uid).toBe((await stat(volume)).uid);
      expect((await stat(uidFile)).uid).not.toBe(0);
      // Neither the host's files nor the key were within its reach.
      expect(existsSync(canary)).toBe(false);
      expect((await readFile(join(volume, 'evil-leak'), 'utf8')).trim()).toBe('none');
    },
    120_000,
  );
});
