// The unit image carries the products' native programs as this machine has them (issue 34: the arena
// game on LXD never read live info `ok`, ioq3ded was not in the image). That ioq3ded then answers inside
// an LXD unit is lxd-services.test.ts's part, with a cluster.
import { access } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { GAME_LIBRARY, IOQ3DED } from '../../server/src/games/arena/install.js';
import { PRODUCT_PROGRAMS, programFiles } from '../../server/src/substrate/lxd/image-programs.js';

const installed = await access(IOQ3DED).then(
  () => true,
  () => false,
);

describe("the unit image's native programs", () => {
  it("names the arena game's server and its game library", () => {
    expect(PRODUCT_PROGRAMS).toEqual(expect.arrayContaining([IOQ3DED, GAME_LIBRARY]));
  });

  it.skipIf(!installed)(
    'carries ioq3ded with the libraries it links, where they are on this machine',
    async () => {
      const files = await programFiles();
      expect(files).toEqual(expect.arrayContaining([IOQ3DED, GAME_LIBRARY]));
      expect(files.some((f) => /\/libc\.so\.6$/.test(f))).toBe(true);
      for (const file of files) expect(file.startsWith('/')).toBe(true);
    },
  );

  it('leaves out a program not installed here', async () => {
    expect(await programFiles(['/nonexistent/ioq3ded'])).toEqual([]);
  });
});
