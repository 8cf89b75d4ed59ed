// Failures: what svcctl prints on stderr and the documented exit code (cli/src/exit-codes.ts).
import { createServer, type Server } from 'node:http';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAsset } from '../../../server/src/features/public/store.js';
import { startTestApp, type TestApp } from '../../../test/support/app.js';
import { ExitCode } from '../../src/exit-codes.js';
import { ensureBuilt } from '../support/build.js';
import { closedPort, runCli, type CliRun } from '../support/run-cli.js';

let app: TestApp;
const svcctl = (args: string[], run: CliRun = {}) =>
  runCli(args, { ...run, env: { SVCCTL_BASE_URL: app.baseUrl, ...run.env } });

beforeAll(async () => {
  ensureBuilt();
  app = await startTestApp();
}, 180_000);
afterAll(() => app?.close());

describe('API problems', () => {
  it('prints a 404 with its code and request id, exit 3', async () => {
    const r = await svcctl(['public', 'resellers', 'by-host', 'nope.example']);
    expect(r.code).toBe(ExitCode.notFound);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/^error: .+ \(HTTP 404\)$/m);
    expect(r.stderr).toContain('No reseller is served on this hostname.');
    expect(r.stderr).toMatch(/^ {2}code: +not-found$/m);
    expect(r.stderr).toMatch(/^ {2}request id: +\S+$/m);
  });

  it('prints each validation error of a 400 with its location and pointer, exit 5', async () => {
    const r = await svcctl(['public', 'assets', 'get', 'not-a-uuid']);
    expect(r.code).toBe(ExitCode.invalid);
    expect(r.stderr).toMatch(/^ {2}code: +invalid-request$/m);
    expect(r.stderr).toContain('validation errors:');
    expect(r.stderr).toMatch(/^ {4}- path id: .+$/m);
  });

  it('shows body validation errors for a body the server refuses', async () => {
    const r = await svcctl([
      'public',
      'client-errors',
      'create',
      '--data',
      '{"error_id":"e1","message":"m","bogus":1}',
    ]);
    expect(r.code).toBe(ExitCode.invalid);
    expect(r.stderr).toMatch(/^ {4}- body \/.*$/m);
    const [row] = await app.sql<{ count: number }[]>`select count(*)::int as count from client_errors`;
    expect(row?.count).toBe(0);
  });

  it('maps 403 to exit 4', async () => {
    const asset = await createAsset(
      app.sql,
      { kind: 'support_attachment', contentType: 'text/plain', bytes: Buffer.from('x') },
      app.clock.now(),
    );
    const r = await svcctl(['public', 'assets', 'get', asset.id, '--output', '-']);
    expect(r.code).toBe(ExitCode.auth);
    expect(r.stderr).toMatch(/^ {2}code: +forbidden$/m);
  });

  it('fails a generic route through svcctl api the same way', async () => {
    const r = await svcctl(['api', 'GET', '/public/resellers/by-host/nope.example']);
    expect(r.code).toBe(ExitCode.notFound);
    expect(r.stderr).toMatch(/^ {2}code: +not-found$/m);
  });
});

describe('usage errors (exit 2, nothing sent)', () => {
  it.each([
    ['an unknown flag', ['public', 'incidents', 'list', '--bogus'], /unknown option '--bogus'/],
    ['an unknown command', ['public', 'incidnets'], /unknown command 'incidnets'/],
    ['a missing positional', ['public', 'captcha-config', 'get'], /missing required argument 'HOSTNAME'/],
    ['an extra positional', ['public', 'capabilities', 'extra'], /too many arguments/],
    ['a bad output format', ['-o', 'xml', 'public', 'capabilities'], /argument 'xml' is invalid/],
    [
      'invalid --data JSON',
      ['public', 'client-errors', 'create', '--data', '{nope'],
      /--data is not valid JSON/,
    ],
    [
      'a missing --data file',
      ['public', 'client-errors', 'create', '--data', '@/nonexistent/x.json'],
      /cannot read \/nonexistent\/x.json/,
    ],
    [
      'a missing required body field',
      ['public', 'client-errors', 'create', '--error-id', 'x'],
      /missing required body field: --message \(message\)/,
    ],
    ['a group without its command', ['public'], /Usage: svcctl public/],
    ['no command at all', [], /Usage: svcctl/],
    ['a bad method for svcctl api', ['api', 'FETCH', '/public/incidents'], /unknown method "FETCH"/],
    [
      'a body on a GET through svcctl api',
      ['api', 'GET', '/public/incidents', '--data', '{}'],
      /GET requests cannot carry --data/,
    ],
  ])('%s', async (_name, args, message) => {
    const r = await svcctl(args);
    expect(r.stderr).toMatch(message);
    expect(r.code).toBe(ExitCode.usage);
    expect(r.stdout).toBe('');
  });

  it('sends nothing when a required body field is missing', async () => {
    await svcctl(['public', 'client-errors', 'create', '--error-id', 'never-sent']);
    const rows = await app.sql`select 1 from client_errors where error_id = 'never-sent'`;
    expect(rows).toHaveLength(0);
  });
});

describe('no answer', () => {
  it('exits 8 when svcctl api cannot reach the server', async () => {
    const port = await closedPort();
    const r = await runCli(['api', 'GET', '/public/incidents', '--base-url', `http://127.0.0.1:${port}`]);
    expect(r.code).toBe(ExitCode.network);
    expect(r.stderr).toContain('connect ECONNREFUSED');
  });

  it('exits 8 when the server cannot be reached', async () => {
    const port = await closedPort();
    const r = await runCli(['public', 'capabilities', '--base-url', `http://127.0.0.1:${port}`]);
    expect(r.code).toBe(ExitCode.network);
    expect(r.stderr).toContain(
      `cannot reach the API: GET http://127.0.0.1:${port}/api/v2/public/capabilities failed: connect ECONNREFUSED`,
    );
  });
});

describe('every documented status class', () => {
  // A stub that answers with the status named by a /status/NNN path segment, as problem details.
  let stub: Server;
  let stubUrl: string;
  beforeAll(async () => {
    stub = createServer((req, res) => {
      const status = Number(/\/status\/(\d{3})/.exec(req.url ?? '')?.[1] ?? 500);
      res.writeHead(status, {
        'content-type': 'application/problem+json',
        'x-request-id': 'req-stub',
        'retry-after': '7',
      });
      res.end(
        JSON.stringify({
          type: '/docs/errors#x',
          title: `Status ${status}`,
          status,
          detail: 'stubbed',
          code: `code-${status}`,
          request_id: 'req-stub',
        }),
      );
    });
    stub.listen(0, '127.0.0.1');
    await once(stub, 'listening');
    stubUrl = `http://127.0.0.1:${(stub.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise((r) => stub.close(r)));

  it.each([
    [400, ExitCode.invalid],
    [401, ExitCode.auth],
    [403, ExitCode.auth],
    [404, ExitCode.notFound],
    [409, ExitCode.conflict],
    [413, ExitCode.invalid],
    [422, ExitCode.conflict],
    [429, ExitCode.rateLimited],
    [500, ExitCode.server],
    [501, ExitCode.server],
  ])('HTTP %i exits %i', async (status, code) => {
    // POST: the SDK never retries it, so 429 is reported at once.
    const r = await runCli(['api', 'POST', `/status/${status}`, '--base-url', stubUrl]);
    expect(r.code).toBe(code);
    expect(r.stderr).toContain(`error: Status ${status} (HTTP ${status})`);
    expect(r.stderr).toMatch(new RegExp(`^  code: +code-${status}$`, 'm'));
    expect(r.stderr).toMatch(/^ {2}request id: +req-stub$/m);
    if (status === 429) expect(r.stderr).toMatch(/^ {2}retry after: +7s$/m);
  });

  it("maps a generated command's 500 to exit 7 too", async () => {
    // The base URL may carry a path; the SDK appends /api/v2/public/capabilities to it.
    const r = await runCli(['public', 'capabilities', '--base-url', `${stubUrl}/status/500`]);
    expect(r.code).toBe(ExitCode.server);
  });
});
