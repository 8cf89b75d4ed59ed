// The image every unit of the LXD substrate starts from, built on this machine (never downloaded): a
// busybox-static root filesystem, this machine's Node.js with the libraries it links, the products' native
// programs where this machine has them (image-programs.ts: ioq3ded), and the unit agent
// and the catalog's workload programs bundled by esbuild. Its PID 1 is a small supervisor that runs the
// agent, again when it dies, and stops it (so its workload) when LXD stops the instance.
//
// The image is named by a digest of what went into it, uploaded once per cluster (two processes
// uploading it at once both succeed) and found by its alias afterwards.
import { createHash } from 'node:crypto';
import { execFile } from 'node:child_process';
import { chmod, copyFile, mkdir, mkdtemp, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { createReadStream } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { MINECRAFT_VERSION } from '../../workloads/block/version.js';
import { isConflict, type LxdClient } from './client.js';
import { cachedBuild } from '../../process/build-cache.js';
import { bundleFlyingSquid, FLYING_SQUID_EXTERNAL } from './image-flying-squid.js';
import { programFiles } from './image-programs.js';
import { runtimeModuleFiles } from './image-modules.js';
import { UNIT_ROOT } from './paths.js';

const run = promisify(execFile);
const BUSYBOX = '/bin/busybox';
const SOURCES = fileURLToPath(new URL('../../', import.meta.url));
const REPO = fileURLToPath(new URL('../../../../', import.meta.url));
const LOCKFILE = join(REPO, 'package-lock.json');
// Where build tools keep their caches: shared by every process of this checkout (each test app has its
// own DATA_DIR), writable only by its owner, and gone with a fresh install.
const BUNDLE_CACHE = join(REPO, 'node_modules', '.cache', 'svc-unit-image');
// The bundles keep the repository's layout under /opt/svc, so the files they read beside their sources
// (the UnitSignal schema, spec/) are where they look for them.
const IMAGE_SOURCES = '/opt/svc/server/src';
const DATA_FILES = ['spec/unit-signal.schema.json'];
export const AGENT_IN_IMAGE = `${IMAGE_SOURCES}/agent/main.mjs`;
export const workloadInImage = (program: string) => `${IMAGE_SOURCES}/workloads/${program}.mjs`;
/** The confined file layer's server, run in a volume host instance (volume-host.ts). */
export const VOLUME_SERVER_IN_IMAGE = `${IMAGE_SOURCES}/substrate/lxd/volume-server/main.mjs`;
const PROGRAMS = [
  'agent/main.ts',
  'workloads/block-game.ts',
  'workloads/arena-game.ts',
  'workloads/web-app.ts',
  'substrate/lxd/volume-server/main.ts',
];
// The block game loads flying-squid with createRequire at run time: it goes in bundled on its own, and
// what that bundle leaves outside as files, all under /opt/svc/node_modules, where Node's lookup from the
// bundles' folders finds them (image-flying-squid.ts, image-modules.ts).
const FLYING_SQUID_IN_IMAGE = '/opt/svc/node_modules/flying-squid/index.js';
// Files read or copied at once, rather than one after another.
const IO_BATCH = 64;

// PID 1. LXD stops an instance with SIGPWR (then kills it after the stop timeout); `wait` returns early
// when a trapped signal arrives, and the trap then ends the agent, which ends its workload first.
// A volume host (SVC_ROLE=volumes, volume-host.ts) runs no agent: its PID 1 waits for its stop, and its
// volume servers come by exec.
const INIT = `#!/bin/sh
if [ "$SVC_ROLE" = volumes ]; then
  trap 'exit 0' PWR TERM INT
  while :; do sleep 3600 & wait $!; done
fi
unit_dir="$SVC_UNIT_DIR"
agent=
stop() {
  [ -n "$agent" ] && kill -TERM "$agent" 2>/dev/null && wait "$agent"
  exit 0
}
trap stop PWR TERM INT
# A container with no network device still has its loopback, down until raised: the unit's address is
# on it, where the instance's proxy devices connect.
ip link set lo up
mkdir -p "$unit_dir"
while :; do
  /usr/bin/node ${AGENT_IN_IMAGE} "$unit_dir" >> "$unit_dir/agent.log" 2>&1 &
  agent=$!
  # The agent runs only once its unit names it (agent/agent.ts claimUnit), as the local driver does.
  echo "$agent" > "$unit_dir/agent.pid"
  wait "$agent"
  sleep 1
done
`;

export interface UnitImage {
  alias: string;
}

/** Makes sure the cluster has the unit image; answers its alias. `workDir` holds the build. */
export async function ensureUnitImage(client: LxdClient, workDir: string): Promise<UnitImage> {
  const [bundles, squid, modules, programs] = await Promise.all([
    bundlePrograms(BUNDLE_CACHE),
    bundleFlyingSquid(FLYING_SQUID_IN_IMAGE, BUNDLE_CACHE, LOCKFILE),
    runtimeModuleFiles(REPO, FLYING_SQUID_EXTERNAL, MINECRAFT_VERSION),
    programFiles(),
  ]);
  bundles.set(squid.path, squid.text);
  const digest = createHash('sha256');
  digest.update(INIT);
  for (const [name, code] of bundles) digest.update(name).update(code);
  // The run-time tree by content, so an upgraded or patched package makes a new image.
  const files = [...DATA_FILES, ...modules];
  for (let i = 0; i < files.length; i += IO_BATCH) {
    const batch = files.slice(i, i + IO_BATCH);
    const contents = await Promise.all(batch.map((file) => readFile(join(REPO, file))));
    batch.forEach((file, j) => digest.update(file).update(contents[j]!));
  }
  digest.update(`${process.version} ${(await stat(process.execPath)).size} ${(await stat(BUSYBOX)).size}`);
  // An installed, upgraded or removed product program makes a new image.
  for (const file of programs) digest.update(`${file} ${(await stat(file)).size}`);
  const alias = `svc-unit-${digest.digest('hex').slice(0, 16)}`;
  if (await client.find(`/1.0/images/aliases/${alias}`)) return { alias };

  await mkdir(workDir, { recursive: true });
  const staging = await mkdtemp(join(workDir, 'image-'));
  try {
    const tarball = join(staging, 'image.tar');
    await stageRootfs(join(staging, 'rootfs'), bundles, modules, programs);
    await writeFile(
      join(staging, 'metadata.yaml'),
      `architecture: x86_64\ncreation_date: ${Math.floor(Date.now() / 1000)}\nproperties:\n  description: svc unit ${alias}\n  os: busybox\n`,
    );
    await run('tar', ['--create', `--file=${tarball}`, `--directory=${staging}`, '--numeric-owner', '--owner=0', '--group=0', 'metadata.yaml', 'rootfs']);
    const fingerprint = await upload(client, tarball);
    try {
      await client.call('POST', '/1.0/images/aliases', { name: alias, target: fingerprint });
    } catch (err) {
      if (!isConflict(err)) throw err;
    }
    return { alias };
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
}

async function upload(client: LxdClient, tarball: string): Promise<string> {
  const digest = createHash('sha256');
  for await (const chunk of createReadStream(tarball)) digest.update(chunk as Buffer);
  const fingerprint = digest.digest('hex');
  if (await client.find(`/1.0/images/${fingerprint}`)) return fingerprint;
  const res = await client.raw({
    method: 'POST',
    path: '/1.0/images',
    headers: {
      'content-type': 'application/octet-stream',
      'content-length': String((await stat(tarball)).size),
      'x-lxd-public': 'false',
    },
    body: createReadStream(tarball),
  });
  const chunks: Buffer[] = [];
  for await (const chunk of res) chunks.push(chunk as Buffer);
  const answer = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { operation?: string; error?: string };
  if (!answer.operation) throw new Error(`LXD refused the unit image: ${answer.error ?? res.statusCode}`);
  try {
    await client.wait(answer.operation);
  } catch (err) {
    // Another process uploaded the same image first.
    if (!/already exists/i.test((err as Error).message)) throw err;
  }
  return fingerprint;
}

async function bundlePrograms(cacheDir: string): Promise<Map<string, string>> {
  const files = await cachedBuild(cacheDir, import.meta.url, LOCKFILE, {
    entryPoints: PROGRAMS.map((p) => join(SOURCES, p)),
    outbase: SOURCES,
    outdir: IMAGE_SOURCES,
    bundle: true,
    write: false,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    outExtension: { '.js': '.mjs' },
    // ssh2's optional native speed-ups: it falls back to JavaScript without them.
    external: ['cpu-features', '*.node'],
    // What CommonJS dependencies (ssh2) expect of their module scope.
    banner: {
      js: [
        "import { createRequire as __svcRequire } from 'node:module';",
        "import { fileURLToPath as __svcPath } from 'node:url';",
        'const require = __svcRequire(import.meta.url);',
        'const __filename = __svcPath(import.meta.url);',
        "const __dirname = __svcPath(new URL('.', import.meta.url));",
      ].join(' '),
    },
    logLevel: 'error',
  });
  return new Map(files.map((f) => [f.path, f.text]));
}

async function stageRootfs(
  root: string,
  bundles: Map<string, string>,
  modules: string[],
  programs: readonly string[],
): Promise<void> {
  for (const dir of ['bin', 'sbin', 'usr/bin', 'etc', 'dev', 'proc', 'sys', 'tmp', 'root', 'run', UNIT_ROOT.slice(1)])
    await mkdir(join(root, dir), { recursive: true });
  await chmod(join(root, 'tmp'), 0o1777);
  await copyFile(BUSYBOX, join(root, 'bin/busybox'));
  const { stdout: applets } = await run(BUSYBOX, ['--list']);
  for (const applet of applets.split('\n').filter(Boolean)) {
    if (applet !== 'busybox') await symlink('busybox', join(root, 'bin', applet)).catch(() => undefined);
  }
  await copyFile(process.execPath, join(root, 'usr/bin/node'));
  const { stdout: linked } = await run('ldd', [process.execPath]);
  for (const [, lib] of linked.matchAll(/(\/\S+\.so\S*)/g) as IterableIterator<[string, string]>) {
    const target = join(root, lib);
    await mkdir(dirname(target), { recursive: true });
    await copyFile(lib, target);
  }
  for (const file of programs) {
    await mkdir(join(root, dirname(file)), { recursive: true });
    await copyFile(file, join(root, file));
  }
  for (const [path, code] of bundles) {
    await mkdir(join(root, dirname(path)), { recursive: true });
    await writeFile(join(root, path), code);
  }
  const files = [...DATA_FILES, ...modules];
  for (const dir of new Set(files.map((file) => dirname(file))))
    await mkdir(join(root, '/opt/svc', dir), { recursive: true });
  for (let i = 0; i < files.length; i += IO_BATCH)
    await Promise.all(files.slice(i, i + IO_BATCH).map((file) => copyFile(join(REPO, file), join(root, '/opt/svc', file))));
  await writeFile(join(root, 'etc/passwd'), 'root:x:0:0:root:/root:/bin/sh\n');
  await writeFile(join(root, 'etc/group'), 'root:x:0:\n');
  await writeFile(join(root, 'sbin/init'), INIT, { mode: 0o755 });
}
