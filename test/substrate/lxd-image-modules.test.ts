// The unit image's run-time node_modules (server/src/substrate/lxd/image-modules.ts), from this
// repository's package-lock.json and node_modules: a package's closure (flying-squid's, a large one),
// minecraft-data cut to the served version. That the block game runs from it is lxd-services.test.ts's part.
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import {
  dependencyClosure,
  minecraftDataFiles,
  runtimeModuleFiles,
} from '../../server/src/substrate/lxd/image-modules.js';
import { MINECRAFT_VERSION } from '../../server/src/workloads/block/version.js';

const REPO = fileURLToPath(new URL('../../', import.meta.url));

describe("the unit image's run-time modules", () => {
  it("holds flying-squid's dependencies as the lock resolves them, never a dev dependency", async () => {
    const closure = await dependencyClosure(REPO, ['flying-squid']);
    expect(closure).toEqual(
      expect.arrayContaining([
        'node_modules/flying-squid',
        'node_modules/minecraft-protocol',
        'node_modules/minecraft-data',
        'node_modules/prismarine-chunk',
      ]),
    );
    expect(closure).not.toContain('node_modules/mineflayer');
    expect(closure).not.toContain('node_modules/vitest');
    await expect(dependencyClosure(REPO, ['no-such-package'])).rejects.toThrow(/not in package-lock.json/);
  });

  it("keeps minecraft-data's files of the served version only, where dataPaths.json puts them", async () => {
    const data = await minecraftDataFiles(`${REPO}/node_modules/minecraft-data`, MINECRAFT_VERSION);
    expect(data).toContain(`minecraft-data/data/pc/${MINECRAFT_VERSION}/blocks.json`);
    expect(data).toContain(`minecraft-data/data/pc/${MINECRAFT_VERSION}/proto.yml`);
    await expect(minecraftDataFiles(`${REPO}/node_modules/minecraft-data`, '0.0.1')).rejects.toThrow(/no Java Edition/);

    const files = await runtimeModuleFiles(REPO, ['minecraft-data'], MINECRAFT_VERSION);
    const prefix = 'node_modules/minecraft-data/';
    const kept = files.filter((f) => f.startsWith(`${prefix}minecraft-data/data/pc/`) && !f.includes('/common/'));
    expect(new Set(kept)).toEqual(new Set([...data].map((f) => `${prefix}${f}`)));
    expect(files).toContain(`${prefix}minecraft-data/data/dataPaths.json`);
    expect(files).toContain(`${prefix}minecraft-data/data/pc/common/protocolVersions.json`);
    expect(files).toContain('node_modules/minecraft-data/index.js');
    expect(files).toContain('node_modules/minecraft-data/data.js');
    // Types, source maps and a package's own tests stay out.
    const outside = /\.d\.ts$|\.map$|node_modules\/(@[^/]+\/)?[^/]+\/(test|docs?)\//;
    expect(files.filter((f) => outside.test(f))).toEqual([]);
    const closure = await runtimeModuleFiles(REPO, ['flying-squid'], MINECRAFT_VERSION);
    expect(closure).toContain('node_modules/flying-squid/index.js');
    expect(closure.filter((f) => outside.test(f))).toEqual([]);
  });
});
