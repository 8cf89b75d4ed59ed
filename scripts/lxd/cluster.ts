// A real LXD cluster on this machine, on loopback: daemons each with their own LXD_DIR, the first made a
// cluster with a `dir` storage pool, the others joining it with a token. Tests run the substrate
// contract suite against it, and `npm run lxd:cluster` starts one for `SUBSTRATE=lxd npm start`.
// Needs root and Debian's lxd (see docs/substrate.md); VMs need vhost_vsock, so units are
// system containers.
import { execFile, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { LxdClient } from '../../server/src/substrate/lxd/client.js';

const run = promisify(execFile);

export interface LxdMember {
  name: string;
  dir: string;
  url: string;
  address: string;
}

export interface LxdCluster {
  /** The first member's unix socket URL (`unix:/…/unix.socket`): any member answers for the cluster. */
  url: string;
  members: LxdMember[];
  stop(): Promise<void>;
}

export function lxdInstalled(): boolean {
  return existsSync('/usr/bin/lxd') || existsSync('/usr/sbin/lxd');
}

/** Starts (or finds running) `count` members under `dir`, clustered. */
export async function startLxdCluster(dir: string, count = 2): Promise<LxdCluster> {
  const members: LxdMember[] = [];
  // Unprivileged containers (another uid on the host) must be able to pass through to their roots.
  await mkdir(dir, { recursive: true });
  await chmod(dir, 0o711);
  for (let i = 1; i <= count; i++) {
    const memberDir = join(dir, `m${i}`);
    await mkdir(memberDir, { recursive: true });
    await chmod(memberDir, 0o711);
    const url = `unix:${join(memberDir, 'unix.socket')}`;
    const portFile = join(memberDir, 'svc-port');
    if (!(await answers(url))) await startDaemon(memberDir);
    const port = existsSync(portFile) ? Number(await readFile(portFile, 'utf8')) : await freePort();
    await writeFile(portFile, `${port}\n`);
    const member: LxdMember = { name: `m${i}`, dir: memberDir, url, address: `127.0.0.1:${port}` };
    members.push(member);
    const client = new LxdClient({ url, project: 'default' });
    const clustered = (await client.call<{ enabled: boolean }>('GET', '/1.0/cluster')).metadata.enabled;
    if (clustered) continue;
    if (i === 1) await preseed(memberDir, firstMember(member));
    else {
      const first = new LxdClient({ url: members[0]!.url, project: 'default' });
      const op = await first.call<{ metadata: JoinSecret }>('POST', '/1.0/cluster/members', {
        server_name: member.name,
      });
      const token = joinToken(op.metadata.metadata);
      await preseed(memberDir, joiningMember(member, token));
    }
  }
  return {
    url: members[0]!.url,
    members,
    stop: async () => {
      for (const member of [...members].reverse())
        await run('lxd', ['shutdown', '--timeout', '30'], { env: { ...process.env, LXD_DIR: member.dir } }).catch(() => undefined);
    },
  };
}

interface JoinSecret {
  serverName: string;
  fingerprint: string;
  addresses: string[];
  secret: string;
  expiresAt: string;
}

/** What `lxc cluster add` prints: the join operation's metadata as base64 JSON (LXD's ClusterMemberJoinToken). */
function joinToken(m: JoinSecret): string {
  const token = { server_name: m.serverName, fingerprint: m.fingerprint, addresses: m.addresses, secret: m.secret, expires_at: m.expiresAt };
  return Buffer.from(JSON.stringify(token)).toString('base64');
}

async function startDaemon(dir: string): Promise<void> {
  const daemon = spawn('lxd', ['--group', 'root', `--logfile=${join(dir, 'lxd.log')}`], {
    env: { ...process.env, LXD_DIR: dir },
    // Its own directory, not the caller's: the daemon outlives the run that started it (tests reuse a
    // running cluster), and LXD's rsync (volume snapshots) fails once its working directory was removed.
    cwd: dir,
    detached: true,
    stdio: 'ignore',
  });
  daemon.unref();
  await run('lxd', ['waitready', '--timeout', '60'], { env: { ...process.env, LXD_DIR: dir } });
}

function firstMember(member: LxdMember): string {
  return `config:
  core.https_address: ${member.address}
  cluster.https_address: ${member.address}
storage_pools:
- name: default
  driver: dir
profiles:
- name: default
  devices:
    root:
      path: /
      pool: default
      type: disk
cluster:
  server_name: ${member.name}
  enabled: true
`;
}

function joiningMember(member: LxdMember, token: string): string {
  return `cluster:
  enabled: true
  server_name: ${member.name}
  server_address: ${member.address}
  cluster_token: ${token}
  member_config:
  - entity: storage-pool
    name: default
    key: source
    value: ""
`;
}

async function preseed(dir: string, yaml: string): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    const init = spawn('lxd', ['init', '--preseed'], { env: { ...process.env, LXD_DIR: dir }, stdio: ['pipe', 'ignore', 'pipe'] });
    let err = '';
    init.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
    init.once('error', reject);
    init.once('close', (code) => (code === 0 ? resolve() : reject(new Error(`lxd init failed: ${err.trim()}`))));
    init.stdin.end(yaml);
  });
}

async function answers(url: string): Promise<boolean> {
  try {
    await new LxdClient({ url, project: 'default' }).call('GET', '/1.0');
    return true;
  } catch {
    return false;
  }
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

// `npm run lxd:cluster -- DIR [MEMBERS]`: starts (or finds running) a cluster and prints its LXD_URL.
if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const dir = resolve(process.argv[2] ?? '.data/lxd');
  const cluster = await startLxdCluster(dir, Number(process.argv[3] ?? 2));
  process.stdout.write(
    `LXD cluster of ${cluster.members.length} members under ${dir}\nLXD_URL=${cluster.url}\n` +
      `stop it with: ${cluster.members.map((m) => `LXD_DIR=${m.dir} lxd shutdown`).join('; ')}\n`,
  );
}
