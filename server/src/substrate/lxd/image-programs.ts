// The products' real programs that are not Node code, carried by the unit image as the local substrate
// finds them on this machine (issue 34: without ioq3ded an arena on LXD read `offline` for ever): each
// file where it is installed here, with the shared libraries it links, at the same paths. A program
// not installed here is left out, as the local substrate then runs its stand-in.
import { execFile } from 'node:child_process';
import { access } from 'node:fs/promises';
import { promisify } from 'node:util';
import { GAME_LIBRARY, IOQ3DED } from '../../games/arena/install.js';

const run = promisify(execFile);

/** Every product's native program files, by absolute path. */
export const PRODUCT_PROGRAMS: readonly string[] = [IOQ3DED, GAME_LIBRARY];

/** The files to copy into the image: the installed programs and the libraries they link, sorted. */
export async function programFiles(programs: readonly string[] = PRODUCT_PROGRAMS): Promise<string[]> {
  const files = new Set<string>();
  for (const program of programs) {
    if (
      !(await access(program).then(
        () => true,
        () => false,
      ))
    )
      continue;
    files.add(program);
    const { stdout } = await run('ldd', [program]);
    for (const [, lib] of stdout.matchAll(/(\/\S+\.so\S*)/g) as IterableIterator<[string, string]>)
      files.add(lib);
  }
  return [...files].sort();
}
