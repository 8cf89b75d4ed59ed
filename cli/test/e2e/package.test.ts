// `npm pack` of svcctl and the SDK, installed side by side as the README says, gives a working bin
// (bin/svcctl.cjs, which loads dist/svcctl.cjs, the CLI bundled with the SDK; yaml is loaded from the
// dependencies when used). The package has no src/, so the bin never tries to build.
// The registry dependencies (yaml, and the SDK's openapi-fetch) are linked from this checkout
// instead of downloaded.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync } from 'node:fs';
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ensureBuilt, REPO } from '../support/build.js';
import { runCliAt, tempDir } from '../support/run-cli.js';

let installed: string;
let modulesDir: string;
let stub: Server;
let stubUrl: string;

beforeAll(async () => {
  ensureBuilt();
  const root = tempDir('svcctl-pack-');
  const modules = join(root, 'node_modules');
  modulesDir = modules;
  for (const [dir, name] of [
    ['sdk', '@svcplatform/sdk'],
    ['cli', '@svcplatform/svcctl'],
  ] as const) {
    // --ignore-scripts: prepack would rebuild dist/ while other test files run it.
    execFileSync('npm', ['pack', '--ignore-scripts', '--pack-destination', root], {
      cwd: join(REPO, dir),
      stdio: 'ignore',
    });
    const tarball = readdirSync(root).find((f) => f.startsWith(name.replace('@', '').replace('/', '-')))!;
    const target = join(modules, name);
    mkdirSync(target, { recursive: true });
    execFileSync('tar', ['xzf', join(root, tarball), '-C', target, '--strip-components=1']);
  }
  const fromCli = createRequire(join(REPO, 'cli/package.json'));
  const fromSdk = createRequire(join(REPO, 'sdk/package.json'));
  for (const [dep, req] of [
    ['yaml', fromCli],
    ['openapi-fetch', fromSdk],
  ] as const) {
    symlinkSync(packageRoot(req.resolve(dep)), join(modules, dep));
  }
  const packageJson = JSON.parse(readFileSync(join(modules, '@svcplatform/svcctl/package.json'), 'utf8')) as {
    bin: Record<string, string>;
  };
  installed = join(modules, '@svcplatform/svcctl', packageJson.bin.svcctl!);
  stub = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end('[{"id":"i1","title":"Packed"}]');
  });
  stub.listen(0, '127.0.0.1');
  await once(stub, 'listening');
  stubUrl = `http://127.0.0.1:${(stub.address() as AddressInfo).port}`;
}, 180_000);
afterAll(async () => {
  if (stub) await new Promise((r) => stub.close(r));
});

/** The directory of the package.json above a resolved entry point. */
function packageRoot(entry: string): string {
  let dir = dirname(entry);
  while (!existsSync(join(dir, 'package.json'))) dir = dirname(dir);
  return dir;
}

it('packs the bin and the bundle, not the checkout build helper', () => {
  const root = join(modulesDir, '@svcplatform/svcctl');
  expect(readdirSync(join(root, 'bin'))).toEqual(['svcctl.cjs']);
  expect(existsSync(join(root, 'dist/svcctl.cjs'))).toBe(true);
  expect(existsSync(join(root, 'src'))).toBe(false);
});

it('runs --help from the packed files', async () => {
  const r = await runCliAt(installed, ['--help']);
  expect(r.code).toBe(0);
  expect(r.stdout).toMatch(/^ {2}public <command> /m);
});

it('runs a generated command through the packed SDK', async () => {
  const r = await runCliAt(installed, ['public', 'incidents', 'list', '-o', 'table', '--base-url', stubUrl]);
  expect(r.stderr).toBe('');
  expect(r.stdout).toBe('ID  TITLE\ni1  Packed\n');
});

it('reads its version beside the bundle and loads yaml from its dependencies when asked', async () => {
  const version = await runCliAt(installed, ['--version']);
  expect(version.stdout.trim()).toBe(JSON.parse(readFileSync(join(REPO, 'cli/package.json'), 'utf8')).version);
  const r = await runCliAt(installed, ['public', 'incidents', 'list', '-o', 'yaml', '--base-url', stubUrl]);
  expect(r.stderr).toBe('');
  expect(r.stdout).toBe('- id: i1\n  title: Packed\n');
});
