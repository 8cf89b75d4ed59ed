// flying-squid (the block game's server) bundled by esbuild into one CommonJS file for the unit image,
// where block-game.ts's createRequire('flying-squid') finds it as /opt/svc/node_modules/flying-squid.
// One file rather than its 140 packages' 3,300: every instance LXD creates unpacks and id-shifts each
// file of the image, and those alone tripled the time to create one.
//
// Two things esbuild cannot follow by itself: flying-squid finds its built-in plugins by listing its
// plugins folder at run time (replaced here by the same list made at build time), and minecraft-data's
// 500 MB of game data, which stays outside the bundle as files cut to the served version
// (image-modules.ts).
import { readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import type { Plugin } from 'esbuild';
import { cachedBuild } from '../../process/build-cache.js';

/** Packages the bundle leaves to run-time lookup, staged beside it as files. */
export const FLYING_SQUID_EXTERNAL = ['minecraft-data'];

// flying-squid's plugins/index.js loads with requireindex: every .js there but index.js and names
// starting with `_` or `.`, in lower-case order; the same, spelled out.
const builtinPlugins: Plugin = {
  name: 'flying-squid-builtin-plugins',
  setup(b) {
    b.onLoad({ filter: /flying-squid[\\/]src[\\/]lib[\\/]plugins[\\/]index\.js$/ }, (args) => {
      const dir = dirname(args.path);
      const files = readdirSync(dir)
        .filter((f) => f.endsWith('.js') && f !== 'index.js' && !/^[_.]/.test(f))
        .sort((a, b) => (a.toLowerCase() < b.toLowerCase() ? -1 : a.toLowerCase() > b.toLowerCase() ? 1 : 0));
      const list = files.map((f) => `require(${JSON.stringify(`./${f}`)})`).join(',\n  ');
      return {
        contents: `module.exports.builtinPlugins = null;\nmodule.exports.initPlugins = () => {\n  module.exports.builtinPlugins = [\n  ${list}\n  ];\n};\n`,
        loader: 'js',
        resolveDir: dir,
      };
    });
  },
};

/** The bundle's text, for `outfile` (its path in the image); kept in `cacheDir` between processes. */
export async function bundleFlyingSquid(
  outfile: string,
  cacheDir: string,
  lockfile: string,
): Promise<{ path: string; text: string }> {
  const entry = createRequire(import.meta.url).resolve('flying-squid');
  const [file] = await cachedBuild(cacheDir, import.meta.url, lockfile, {
    entryPoints: [entry],
    outfile,
    bundle: true,
    write: false,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    external: [...FLYING_SQUID_EXTERNAL, ...FLYING_SQUID_EXTERNAL.map((p) => `${p}/*`), '*.node'],
    // external.js requires the user plugins folder by a computed name (never, with no plugins set): its
    // README is no code.
    loader: { '.md': 'empty' },
    plugins: [builtinPlugins],
    logLevel: 'error',
  });
  return file!;
}
