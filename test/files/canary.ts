// A volume beside a canary: files and a directory outside the volume that no file operation may read,
// write, chmod or delete. `intact()` compares them with what they were, byte for byte and mode for mode.
import { chmod, mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const SECRET = 'CANARY-SECRET-outside-the-volume';

export interface Sandbox {
  base: string;
  volume: string;
  /** A directory outside the volume holding secret.txt and sub/deep.txt. */
  outside: string;
  /** A single file outside the volume. */
  outsideFile: string;
  intact(): Promise<void>;
  cleanup(): Promise<void>;
}

export async function makeSandbox(): Promise<Sandbox> {
  const base = await mkdtemp(join(tmpdir(), 'svc-files-'));
  const volume = join(base, 'volume');
  const outside = join(base, 'outside');
  const outsideFile = join(base, 'outside.txt');
  await mkdir(volume);
  await mkdir(join(outside, 'sub'), { recursive: true });
  await writeFile(join(outside, 'secret.txt'), SECRET);
  await writeFile(join(outside, 'sub', 'deep.txt'), SECRET);
  await writeFile(outsideFile, SECRET);
  await chmod(outsideFile, 0o600);
  await chmod(join(outside, 'secret.txt'), 0o600);
  const snapshot = await describe(base, ['outside.txt', 'outside']);
  return {
    base,
    volume,
    outside,
    outsideFile,
    async intact() {
      const now = await describe(base, ['outside.txt', 'outside']);
      if (JSON.stringify(now) !== JSON.stringify(snapshot)) {
        throw new Error(`outside the volume changed:\n${JSON.stringify(snapshot)}\n${JSON.stringify(now)}`);
      }
    },
    cleanup: () => rm(base, { recursive: true, force: true }),
  };
}

/** Names, modes and contents of the tree at each path, sorted, to compare. */
async function describe(base: string, names: string[]): Promise<string[]> {
  const out: string[] = [];
  for (const name of names) {
    const path = join(base, name);
    const stats = await stat(path);
    if (stats.isDirectory()) {
      out.push(`${name}/ ${(stats.mode & 0o7777).toString(8)}`);
      const children = (await readdir(path)).sort();
      out.push(
        ...(await describe(
          base,
          children.map((child) => join(name, child)),
        )),
      );
    } else {
      out.push(`${name} ${(stats.mode & 0o7777).toString(8)} ${await readFile(path, 'utf8')}`);
    }
  }
  return out;
}
