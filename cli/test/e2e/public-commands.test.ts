// Generated commands against the real server: output formats, positionals, --data, binary output.
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { createAsset, createIncident } from '../../../server/src/features/public/store.js';
import { startTestApp, type TestApp } from '../../../test/support/app.js';
import { ensureBuilt } from '../support/build.js';
import { runCli, tempDir, type CliRun } from '../support/run-cli.js';

let app: TestApp;
let incidentId: string;
const svcctl = (args: string[], run: CliRun = {}) =>
  runCli(args, { ...run, env: { SVCCTL_BASE_URL: app.baseUrl, ...run.env } });

beforeAll(async () => {
  ensureBuilt();
  app = await startTestApp();
  const incident = await createIncident(
    app.sql,
    {
      title: 'Storage degraded',
      message: 'Volumes in fra-1 are slow',
      startedAt: new Date('2026-11-21T11:00:00Z'),
    },
    app.clock.now(),
  );
  incidentId = incident.id;
}, 180_000);
afterAll(() => app?.close());

describe('output formats', () => {
  it('prints JSON when stdout is not a terminal', async () => {
    const r = await svcctl(['public', 'incidents', 'list']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual([
      {
        id: incidentId,
        title: 'Storage degraded',
        started_at: '2026-11-21T11:00:00.000Z',
        message: 'Volumes in fra-1 are slow',
      },
    ]);
  });

  it('prints a list as aligned columns with -o table', async () => {
    const r = await svcctl(['public', 'incidents', 'list', '-o', 'table']);
    expect(r.code).toBe(0);
    const [header, row, ...rest] = r.stdout.trimEnd().split('\n');
    expect(header).toMatch(/^ID\s+TITLE\s+STARTED_AT\s+MESSAGE$/);
    expect(row).toContain(incidentId);
    expect(row).toContain('Storage degraded');
    expect(header!.indexOf('TITLE')).toBe(row!.indexOf('Storage degraded'));
    expect(rest).toEqual([]);
  });

  it('prints an object as key/value lines with -o table', async () => {
    const r = await svcctl(['-o', 'table', 'public', 'captcha-config', 'get', 'example.com']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^enabled:\s+false$/m);
    expect(r.stdout).toMatch(/^provider:\s+none$/m);
    expect(r.stdout).toMatch(/^site_key:\s+-$/m);
  });

  it('prints YAML with --output-format yaml', async () => {
    const r = await svcctl(['public', 'incidents', 'list', '--output-format', 'yaml']);
    expect(r.code).toBe(0);
    expect(parseYaml(r.stdout)).toEqual([
      expect.objectContaining({ id: incidentId, title: 'Storage degraded' }),
    ]);
  });

  it('takes the format from SVCCTL_OUTPUT, and a flag wins over it', async () => {
    const fromEnv = await svcctl(['public', 'incidents', 'list'], { env: { SVCCTL_OUTPUT: 'yaml' } });
    expect(parseYaml(fromEnv.stdout)).toHaveLength(1);
    const flagWins = await svcctl(['public', 'incidents', 'list', '-o', 'json'], {
      env: { SVCCTL_OUTPUT: 'yaml' },
    });
    expect(JSON.parse(flagWins.stdout)).toHaveLength(1);
  });

  it('prints nothing with --quiet and still exits 0', async () => {
    for (const args of [
      ['--quiet', 'public', 'incidents', 'list'],
      ['public', 'capabilities', '-q'],
    ]) {
      const r = await svcctl(args);
      expect({ code: r.code, stdout: r.stdout, stderr: r.stderr }).toEqual({
        code: 0,
        stdout: '',
        stderr: '',
      });
    }
  });
});

describe('arguments', () => {
  it('takes path parameters as positional arguments', async () => {
    const r = await svcctl(['public', 'captcha-config', 'get', 'Example.COM.']);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({
      enabled: false,
      provider: 'none',
      protected_actions: [],
      site_key: null,
    });
  });

  it('accepts global options before and after the command words', async () => {
    const before = await svcctl(['--base-url', app.baseUrl, '-o', 'json', 'public', 'capabilities'], {
      env: { SVCCTL_BASE_URL: undefined },
    });
    const after = await svcctl(['public', 'capabilities', '--base-url', app.baseUrl, '-o', 'json'], {
      env: { SVCCTL_BASE_URL: undefined },
    });
    expect(before.code).toBe(0);
    expect(after.stdout).toBe(before.stdout);
    expect(typeof JSON.parse(before.stdout)).toBe('object');
  });
});

describe('request bodies', () => {
  const reports = () =>
    app.sql<{ error_id: string; message: string; digest: string | null }[]>`
      select error_id, message, digest from client_errors order by received_at, error_id`;

  it('sends --data @file for public client-errors create (204: no output)', async () => {
    const file = join(tempDir(), 'report.json');
    writeFileSync(file, JSON.stringify({ error_id: 'e-file', message: 'from a file', digest: 'd1' }));
    const r = await svcctl(['public', 'client-errors', 'create', '--data', `@${file}`]);
    expect({ code: r.code, stdout: r.stdout, stderr: r.stderr }).toEqual({ code: 0, stdout: '', stderr: '' });
    expect(await reports()).toContainEqual({ error_id: 'e-file', message: 'from a file', digest: 'd1' });
  });

  it('lets explicit flags override the fields of --data', async () => {
    const r = await svcctl([
      'public',
      'client-errors',
      'create',
      '--data',
      '{"error_id":"e-merge","message":"old"}',
      '--message',
      'new',
      '--digest',
      'd2',
    ]);
    expect(r.code).toBe(0);
    expect(await reports()).toContainEqual({ error_id: 'e-merge', message: 'new', digest: 'd2' });
  });

  it('reads --data @- from stdin', async () => {
    const r = await svcctl(['public', 'client-errors', 'create', '--data', '@-'], {
      input: JSON.stringify({ error_id: 'e-stdin', message: 'piped' }),
    });
    expect(r.code).toBe(0);
    expect(await reports()).toContainEqual({ error_id: 'e-stdin', message: 'piped', digest: null });
  });

  it('builds the body from flags alone', async () => {
    const r = await svcctl([
      'public',
      'client-errors',
      'create',
      '--error-id',
      'e-flags',
      '--message',
      'typed',
    ]);
    expect(r.code).toBe(0);
    expect(await reports()).toContainEqual({ error_id: 'e-flags', message: 'typed', digest: null });
  });
});

describe('binary answers', () => {
  const png = Buffer.from('89504e470d0a1a0a0000000d4948445200000001', 'hex');

  it('writes the bytes of public assets get ID --output file', async () => {
    const asset = await createAsset(
      app.sql,
      { kind: 'avatar', contentType: 'image/png', bytes: png },
      app.clock.now(),
    );
    const file = join(tempDir(), 'avatar.png');
    const r = await svcctl(['public', 'assets', 'get', asset.id, '--output', file]);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain(`wrote ${png.length} bytes (image/png)`);
    expect(readFileSync(file)).toEqual(png);
    expect(statSync(file).size).toBe(png.length);
  });

  it('writes the bytes to stdout when it is not a terminal', async () => {
    const asset = await createAsset(
      app.sql,
      { kind: 'avatar', contentType: 'image/png', bytes: png },
      app.clock.now(),
    );
    const r = await svcctl(['public', 'assets', 'get', asset.id]);
    expect(r.code).toBe(0);
    expect(r.stdoutBytes).toEqual(png);
  });
});

describe('svcctl api', () => {
  it('GET /public/incidents answers what public incidents list does', async () => {
    const generic = await svcctl(['api', 'GET', '/public/incidents']);
    const generated = await svcctl(['public', 'incidents', 'list']);
    expect(generic.code).toBe(0);
    expect(generic.stdout).toBe(generated.stdout);
    expect(JSON.parse(generic.stdout)).toHaveLength(1);
  });

  it('takes the method in any case, a copied /api/v2 prefix and -o', async () => {
    const r = await svcctl(['api', 'get', '/api/v2/public/captcha/config/example.com', '-o', 'yaml']);
    expect(r.code).toBe(0);
    expect(parseYaml(r.stdout)).toMatchObject({ enabled: false, provider: 'none' });
  });

  it('POSTs --data and prints nothing for a 204', async () => {
    const r = await svcctl([
      'api',
      'POST',
      '/public/client-errors',
      '--data',
      '{"error_id":"e-api","message":"raw"}',
    ]);
    expect({ code: r.code, stdout: r.stdout, stderr: r.stderr }).toEqual({ code: 0, stdout: '', stderr: '' });
    const rows = await app.sql`select message from client_errors where error_id = 'e-api'`;
    expect(rows).toEqual([{ message: 'raw' }]);
  });

  it('writes a binary answer to --output', async () => {
    const bytes = Buffer.from('GIF89a-not-really');
    const asset = await createAsset(
      app.sql,
      { kind: 'catalog_icon', contentType: 'image/gif', bytes },
      app.clock.now(),
    );
    const file = join(tempDir(), 'icon.gif');
    const r = await svcctl(['api', 'GET', `/public/assets/${asset.id}`, '--output', file]);
    expect(r.code).toBe(0);
    expect(readFileSync(file)).toEqual(bytes);
  });
});
