// The executable dist/svcctl.cjs: the CLI and its dependencies in one CommonJS file (build.mjs says why).
// Two ways to it, one set of options: `npm run build` bundles tsc's dist/bin.js against the SDK's built
// dist/, as an installed svcctl resolves it; the bin in a checkout (bin/build-checkout.cjs) bundles the
// TypeScript sources of the CLI and the SDK directly, which takes a second instead of two tsc runs, so
// the first `npx svcctl` after `npm ci` answers at once.
'use strict';
/* eslint-disable @typescript-eslint/no-require-imports -- CommonJS: loaded by the CommonJS bin */
const { chmodSync } = require('node:fs');
const { join } = require('node:path');

const ROOT = join(__dirname, '..');
const OUT = join(ROOT, 'dist/svcctl.cjs');

/** `fromSource`: cli/src/bin.ts with the SDK's source (tsconfig.json's paths); else dist/bin.js. */
function bundleSvcctl({ fromSource = false } = {}) {
  const { buildSync } = require('esbuild');
  buildSync({
    entryPoints: [join(ROOT, fromSource ? 'src/bin.ts' : 'dist/bin.js')],
    outfile: OUT,
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20.19',
    // tsconfig.json points @svcplatform/sdk at the SDK's source; tsconfig.build.json drops those paths so
    // that the bundle takes the SDK's built dist/.
    tsconfig: join(ROOT, fromSource ? 'tsconfig.json' : 'tsconfig.build.json'),
    // The modules read files beside themselves through import.meta.url (cli-version.ts: ../package.json);
    // the bundle sits in dist/ as they do, so its own URL resolves the same paths.
    define: { 'import.meta.url': '__svcctl_module_url' },
    inject: [join(ROOT, 'scripts/module-url.mjs')],
    // yaml is two thirds of the bundle and only -o yaml and YAML files need it (imported when used): left
    // out, it is loaded from the package's dependencies then, and start-up does not compile it. qrcode
    // likewise: only `sudo totp enroll` on a terminal draws one.
    external: ['yaml', 'qrcode'],
    logLevel: 'warning',
  });
  chmodSync(OUT, 0o755);
}

module.exports = { bundleSvcctl, OUT };
