// A PATH that has every program of this one except the named ones: how a test runs the platform as on a
// host where, say, Debian's tigervnc-standalone-server is not installed, while node, tar and the rest
// stay where the platform looks for them.
import { readdirSync, symlinkSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { findProgram } from '../../server/src/substrate/local/programs.js';

/** A directory of links to the first of each name on `path`, less `hidden`; answers it as a PATH. */
export async function pathWithout(hidden: string[], path = process.env.PATH ?? ''): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'svc-path-'));
  const seen = new Set(hidden);
  for (const from of path.split(delimiter)) {
    let names: string[];
    try {
      names = readdirSync(from);
    } catch {
      continue;
    }
    for (const name of names) {
      if (seen.has(name)) continue;
      const file = findProgram(name, from);
      if (!file) continue;
      seen.add(name);
      symlinkSync(file, join(dir, name));
    }
  }
  return dir;
}
