// svcctl catalog products list | show | os-images against the real server, signed out: JSON answers
// with money as strings, the chosen table columns, and 404's exit code.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../../test/support/app.js';
import { ExitCode } from '../../src/exit-codes.js';
import { ensureBuilt } from '../support/build.js';
import { runCli, type CliRun } from '../support/run-cli.js';

let app: TestApp;
// Every run gets a fresh home without credentials (run-cli.ts): the catalog is read signed out.
const svcctl = (args: string[], run: CliRun = {}) =>
  runCli(args, { ...run, env: { SVCCTL_BASE_URL: app.baseUrl, ...run.env } });

const VPS = '5c0a7a10-0000-4000-8000-000000000001';
const WEB_APP = '5c0a7a10-0000-4000-8000-000000000004';

beforeAll(async () => {
  ensureBuilt();
  app = await startTestApp();
}, 180_000);
afterAll(() => app?.close());

describe('catalog products list', () => {
  it('prints every product as JSON, money as strings', async () => {
    const r = await svcctl(['catalog', 'products', 'list']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const products = JSON.parse(r.stdout) as { slug: string; monthly_fee: unknown }[];
    expect(products.map((p) => [p.slug, p.monthly_fee])).toEqual([
      ['vps-small', '6.50'],
      ['block-game', '8.00'],
      ['arena-game', '4.00'],
      ['web-app', '5.00'],
    ]);
  });

  it('prints the chosen columns with -o table', async () => {
    const r = await svcctl(['catalog', 'products', 'list', '-o', 'table']);
    expect(r.code).toBe(0);
    const [header, ...rows] = r.stdout.trimEnd().split('\n');
    expect(header).toMatch(/^ID\s+SLUG\s+KIND\s+CPU\s+MEMORY_MB\s+STORAGE_GB\s+MONTHLY_FEE\s+FEATURES$/);
    expect(rows).toHaveLength(4);
    expect(rows[0]).toMatch(
      new RegExp(`^${VPS}\\s+vps-small\\s+vps\\s+1\\s+2048\\s+40\\s+6\\.50 EUR\\s+reinstall, screen`),
    );
  });
});

describe('catalog products show', () => {
  it('prints one product', async () => {
    const r = await svcctl(['catalog', 'products', 'show', WEB_APP]);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({
      id: WEB_APP,
      slug: 'web-app',
      kind: 'web_app',
      monthly_fee: '5.00',
    });
  });

  it('exits with the not-found code for an unknown product', async () => {
    const r = await svcctl(['catalog', 'products', 'show', '00000000-0000-4000-8000-000000000000']);
    expect(r.code).toBe(ExitCode.notFound);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/not-found|not found/i);
  });
});

describe('catalog products os-images', () => {
  it('lists the VPS images as a table', async () => {
    const r = await svcctl(['catalog', 'products', 'os-images', VPS, '-o', 'table']);
    expect(r.code).toBe(0);
    const [header, ...rows] = r.stdout.trimEnd().split('\n');
    expect(header).toMatch(/^ID\s+NAME\s+ENABLED\s+MIN_CPU\s+MIN_MEMORY_MB\s+MIN_STORAGE_GB\s+MONTHLY_FEE$/);
    expect(rows.map((row) => row.split(/\s+/)[0])).toEqual([
      'debian-11',
      'debian-12',
      'rocky-9',
      'ubuntu-24.04',
      'ubuntu-24.04-desktop',
      'windows-server-2022',
    ]);
    expect(rows.find((row) => row.startsWith('windows-server-2022'))).toMatch(/15\.00$/);
  });

  it('prints an empty list for a product of another kind', async () => {
    const r = await svcctl(['catalog', 'products', 'os-images', WEB_APP]);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual([]);
  });
});
