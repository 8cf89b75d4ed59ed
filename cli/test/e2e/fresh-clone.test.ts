// `npm ci` alone leaves a working `npx svcctl` in a fresh clone, and no svcctl command a user types
// reaches the npm registry. The checkout's files (tracked and untracked, without what .gitignore
// leaves out: node_modules, dist, .data) are copied to a temporary directory, installed there with
// `npm ci` (from the npm cache where it can), and `npx svcctl` is run with the registry pointed at a
// local stub that records every request. npm links a workspace's bin only when its file exists at
// install time, and only as the lockfile records it, so both must name the committed bin/svcctl.cjs;
// the first run builds the SDK and svcctl, later runs just start.
import { execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { cpSync, existsSync, mkdirSync, readFileSync, realpathSync, rmSync, statSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO } from '../support/build.js';
import { tempDir } from '../support/run-cli.js';

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

const cliPackage = JSON.parse(readFileSync(join(REPO, 'cli/package.json'), 'utf8')) as {
  version: string;
  bin: Record<string, string>;
  files: string[];
};

describe('the bin as npm records it', () => {
  it('is the committed shim, in cli/package.json and in the lockfile that `npm ci` links from', () => {
    expect(cliPackage.bin).toEqual({ svcctl: './bin/svcctl.cjs' });
    expect(cliPackage.files).toContain('bin/svcctl.cjs');
    const lock = JSON.parse(readFileSync(join(REPO, 'package-lock.json'), 'utf8')) as {
      packages: Record<string, { bin?: Record<string, string> }>;
    };
    expect(lock.packages.cli?.bin).toEqual({ svcctl: 'bin/svcctl.cjs' });
    expect(statSync(join(REPO, 'cli/bin/svcctl.cjs')).mode & 0o111).not.toBe(0);
    expect(readFileSync(join(REPO, 'cli/bin/svcctl.cjs'), 'utf8')).toMatch(/^#!\/usr\/bin\/env node\n/);
  });
});

describe('a fresh clone after `npm ci`', () => {
  let clone: string;
  let registry: { url: string; requests: string[]; server: Server };
  let api: { url: string; server: Server };

  /** Runs a command in the clone: the environment of a user's shell, not of this test's npm run. */
  function inClone(command: string, args: string[], extra: Record<string, string> = {}): Promise<Run> {
    const env: Record<string, string> = {};
    for (const [k, v] of Object.entries(process.env)) {
      if (v !== undefined && !/^npm_/i.test(k) && !k.startsWith('VITEST') && k !== 'NODE_OPTIONS') env[k] = v;
    }
    Object.assign(env, { REDOCLY_TELEMETRY: 'off', ...extra });
    const child = spawn(command, args, { cwd: clone, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
    return new Promise((resolve, reject) => {
      child.on('error', reject);
      child.on('close', (code) => resolve({ code, stdout, stderr }));
    });
  }

  /** `npx ARGS`, with every registry request going to the recording stub. */
  const npx = (args: string[]) =>
    inClone('npx', args, { npm_config_registry: registry.url, npm_config_update_notifier: 'false' });

  beforeAll(async () => {
    clone = tempDir('svcctl-clone-');
    // What a clone holds once this tree is committed: tracked and untracked files, minus ignored ones.
    const files = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], {
      cwd: REPO,
      encoding: 'utf8',
    })
      .split('\0')
      .filter((f) => f !== '' && existsSync(join(REPO, f)));
    for (const file of new Set(files)) {
      mkdirSync(dirname(join(clone, file)), { recursive: true });
      cpSync(join(REPO, file), join(clone, file), { preserveTimestamps: false });
    }
    expect(existsSync(join(clone, 'cli/dist'))).toBe(false);

    const requests: string[] = [];
    const registryServer = createServer((req, res) => {
      requests.push(`${req.method} ${req.url}`);
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end('{"error":"not found"}');
    });
    registryServer.listen(0, '127.0.0.1');
    await once(registryServer, 'listening');
    registry = {
      url: `http://127.0.0.1:${(registryServer.address() as AddressInfo).port}/`,
      requests,
      server: registryServer,
    };
    const apiServer = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('[{"id":"i1","title":"From a fresh clone"}]');
    });
    apiServer.listen(0, '127.0.0.1');
    await once(apiServer, 'listening');
    api = { url: `http://127.0.0.1:${(apiServer.address() as AddressInfo).port}`, server: apiServer };

    // From the npm cache where it has the packages; whatever it lacks comes from the registry.
    const install = await inClone('npm', ['ci', '--prefer-offline', '--no-audit', '--no-fund']);
    if (install.code !== 0)
      throw new Error(`npm ci failed (${install.code}):\n${install.stdout}${install.stderr}`);
  }, 300_000);

  afterAll(async () => {
    await Promise.all(
      [registry?.server, api?.server].filter(Boolean).map((s) => new Promise((r) => s!.close(r))),
    );
    if (clone) rmSync(clone, { recursive: true, force: true });
  });

  it('has the workspace bin linked', () => {
    const link = join(clone, 'node_modules/.bin/svcctl');
    expect(existsSync(link)).toBe(true);
    expect(realpathSync(link)).toBe(realpathSync(join(clone, 'cli/bin/svcctl.cjs')));
  });

  it('runs `npx svcctl` as the README shows, building once, without asking the registry', async () => {
    const first = await npx(['svcctl', '--version']);
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toBe(`${cliPackage.version}\n`);
    expect(first.stderr).toContain('svcctl: building the SDK and svcctl');
    expect(existsSync(join(clone, 'cli/dist/svcctl.cjs'))).toBe(true);
    const built = statSync(join(clone, 'cli/dist/svcctl.cjs')).mtimeMs;

    const help = await npx(['svcctl', '--help']);
    expect(help.code, help.stderr).toBe(0);
    expect(help.stdout).toMatch(/^ {2}public <command> /m);
    expect(help.stderr).not.toContain('building');

    // The SDK (bundled) and yaml (from the clone's node_modules) work from the built bin.
    const list = await npx(['svcctl', 'public', 'incidents', 'list', '-o', 'yaml', '--base-url', api.url]);
    expect(list.stderr.replace(/^npm warn .*\n/gm, '')).toBe('');
    expect(list.stdout).toBe('- id: i1\n  title: From a fresh clone\n');
    expect(statSync(join(clone, 'cli/dist/svcctl.cjs')).mtimeMs).toBe(built);

    expect(registry.requests).toEqual([]);
  }, 180_000);

  it('would have seen a registry lookup: npx asks the stub for a name it does not have', async () => {
    const before = registry.requests.length;
    const asked = await npx(['svcctl-probe-not-installed', '--version']);
    expect(asked.code).not.toBe(0);
    expect(registry.requests.slice(before)).toContain('GET /svcctl-probe-not-installed');
  }, 60_000);
});
