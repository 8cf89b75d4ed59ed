// The node_modules a unit image carries as files for what its bundles leave to run-time lookup: the
// block game's flying-squid bundle leaves minecraft-data out (image-flying-squid.ts), whose game data it
// loads through lazy requires. The tree is the dependency closure of those packages as package-lock.json
// resolves it (the repository's own node_modules, never a download), with minecraft-data cut down to
// the one game version served: all of its versions weigh 500 MB, one weighs a few.
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';

/** A file of the tree: `path` relative to the repository, the same in the image under /opt/svc. */
export type ModuleFile = string;

interface LockEntry {
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  dev?: boolean;
}

/** The lock keys (`node_modules/a/node_modules/b`) of `roots` and everything they depend on. */
export async function dependencyClosure(repo: string, roots: string[]): Promise<string[]> {
  const lock = JSON.parse(await readFile(join(repo, 'package-lock.json'), 'utf8')) as {
    packages: Record<string, LockEntry>;
  };
  const packages = lock.packages;
  // Node's own lookup: the dependant's node_modules, then each enclosing one up to the root's.
  const resolve = (from: string, name: string): string | undefined => {
    for (let base = from; ; ) {
      const key = `${base ? `${base}/` : ''}node_modules/${name}`;
      if (packages[key]) return key;
      if (!base) return undefined;
      const nested = base.lastIndexOf('/node_modules/');
      base = nested < 0 ? '' : base.slice(0, nested);
    }
  };
  const seen = new Set<string>();
  const queue = roots.map((root) => {
    const key = resolve('', root);
    if (!key) throw new Error(`${root} is not in package-lock.json`);
    return key;
  });
  while (queue.length) {
    const key = queue.pop()!;
    if (seen.has(key)) continue;
    seen.add(key);
    const entry = packages[key]!;
    const required = Object.keys(entry.dependencies ?? {});
    // Optional and peer dependencies go in when installed: a package probes for them with require.
    const ifPresent = [...Object.keys(entry.optionalDependencies ?? {}), ...Object.keys(entry.peerDependencies ?? {})];
    for (const name of required) {
      const dep = resolve(key, name);
      if (!dep) throw new Error(`${key} needs ${name}, which package-lock.json does not hold`);
      queue.push(dep);
    }
    for (const name of ifPresent) {
      const dep = resolve(key, name);
      if (dep && !packages[dep]!.dev) queue.push(dep);
    }
  }
  return [...seen].sort();
}

/** The files of minecraft-data that `version` (a Java Edition version) loads: data/dataPaths.json says. */
export async function minecraftDataFiles(packageDir: string, version: string): Promise<Set<string>> {
  const data = 'minecraft-data/data';
  const paths = JSON.parse(await readFile(join(packageDir, data, 'dataPaths.json'), 'utf8')) as {
    pc: Record<string, Record<string, string>>;
  };
  const kinds = paths.pc[version];
  if (!kinds) throw new Error(`minecraft-data has no Java Edition ${version}`);
  // data.js names each kind's file after it, the protocol's source (proto) being YAML.
  return new Set(
    Object.entries(kinds).map(([kind, dir]) => `${data}/${dir}/${kind === 'proto' ? 'proto.yml' : `${kind}.json`}`),
  );
}

/**
 * The files of the run-time tree, relative to the repository, sorted. What node never loads (types,
 * source maps, docs, a package's own tests and examples: prismarine-provider-anvil's test worlds alone
 * weigh 16 MB) stays out.
 */
export async function runtimeModuleFiles(repo: string, roots: string[], minecraftVersion: string): Promise<ModuleFile[]> {
  const files: ModuleFile[] = [];
  for (const key of await dependencyClosure(repo, roots)) {
    const dir = join(repo, key);
    const isMinecraftData = key.endsWith('node_modules/minecraft-data');
    const keptData = isMinecraftData ? await minecraftDataFiles(dir, minecraftVersion) : undefined;
    for (const path of await filesUnder(dir)) {
      if (/\.(d\.ts|d\.mts|d\.cts|map|md|markdown)$/i.test(path)) continue;
      if (keptData && path.startsWith('minecraft-data/data/')) {
        // The version tables minecraft-data reads on load for every edition, and the version's own files.
        const common = /^minecraft-data\/data\/(pc|bedrock)\/common\//.test(path);
        if (!common && path !== 'minecraft-data/data/dataPaths.json' && !keptData.has(path)) continue;
      }
      files.push(`${key}/${path}`);
    }
  }
  return files.sort();
}

const OUTSIDE_RUNTIME = new Set(['test', 'tests', '__tests__', 'docs', 'doc', 'example', 'examples', 'benchmark', '.github']);

// A package's own files: its nested node_modules holds other packages, listed on their own if needed.
async function filesUnder(dir: string, prefix = ''): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(join(dir, prefix), { withFileTypes: true })) {
    const path = prefix ? `${prefix}/${entry.name}` : entry.name;
    if (entry.isDirectory()) {
      if (path === 'node_modules' || (!prefix && OUTSIDE_RUNTIME.has(entry.name))) continue;
      out.push(...(await filesUnder(dir, path)));
    } else if (entry.isFile()) out.push(path);
  }
  return out;
}
