// svcctl domains custom list | check | attach | detach against the real server: a single label under the
// embedded default's parent domain (no claim needed), its certificate issued by the local CA once the
// name resolves here (the platform DNS answers it), and a refusal's exit code.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { staffMember } from '../../../test/admin-content/staff.js';
import { freePort, startTestApp, type TestApp } from '../../../test/support/app.js';
import { newAccount } from '../../../test/support/auth.js';
import { randomPortPool } from '../../../test/support/edge.js';
import { startTestPlatformDns, type TestPlatformDns } from '../../../test/support/platform-dns.js';
import { provisionService, type Provisioned } from '../../../test/support/services.js';
import { startTestSmtp, type TestSmtp } from '../../../test/support/smtp.js';
import { ExitCode } from '../../src/exit-codes.js';
import { ensureBuilt } from '../support/build.js';
import { runCli } from '../support/run-cli.js';

let app: TestApp;
let smtp: TestSmtp;
let dns: TestPlatformDns;
let token: string;
let site: Provisioned;

beforeAll(async () => {
  ensureBuilt();
  smtp = await startTestSmtp();
  // The platform DNS server answers the customer's name here: it is the resolver the preflight asks.
  const dnsPort = await freePort();
  app = await startTestApp({
    env: {
      SMTP_URL: smtp.url,
      SOURCE_RATE_LIMIT_SCALE: '1000',
      PORT_POOL: randomPortPool(6),
      DNS_SERVERS: `127.0.0.1:${dnsPort}`,
      // The platform's own DNS is where names in its zones are checked (DECISIONS.md §8).
      DNS_PORT: String(dnsPort),
      DNS_TIMEOUT_MS: '1000',
    },
  });
  dns = await startTestPlatformDns(app, dnsPort);
  const owner = await newAccount(app, smtp, 'cdc-owner');
  const staff = await staffMember(app, smtp, 'cdc-staff', ['manage_services']);
  token = owner.session.token;
  const [personal] = await app.sql<{ id: string }[]>`
    select id from organizations where personal_owner_id = ${owner.session.user.id}`;
  const [project] = await app.sql<{ id: string }[]>`
    select id from projects where organization_id = ${personal!.id} order by created_at limit 1`;
  site = await provisionService(staff.elevated, {
    projectId: project!.id,
    productSlug: 'web-app',
    name: 'Cli site',
  });
}, 180_000);
afterAll(async () => {
  await dns?.stop();
  await app?.close();
  await smtp?.close();
});

const svcctl = (args: string[]) =>
  runCli(args, { env: { SVCCTL_BASE_URL: app.baseUrl, SVCCTL_TOKEN: token } });
const json = <T>(stdout: string) => JSON.parse(stdout) as T;

describe('svcctl domains custom', () => {
  it('checks, attaches, lists and detaches a custom domain; a refusal exits with its code', async () => {
    const id = site.serviceInstanceId;
    const checked = await svcctl([
      'domains',
      'custom',
      'check',
      id,
      '--hostname',
      'cli-site.play.test',
      '-o',
      'json',
    ]);
    expect(checked.code, checked.stderr).toBe(0);
    expect(json(checked.stdout)).toEqual({ status: 'available', reason: null });

    const attached = await svcctl([
      'domains',
      'custom',
      'attach',
      id,
      '--hostname',
      'cli-site.play.test',
      '-o',
      'json',
    ]);
    expect(attached.code, attached.stderr).toBe(0);
    const made = json<{ id: string; hostname: string; status: string }>(attached.stdout);
    expect(made).toMatchObject({ hostname: 'cli-site.play.test', status: 'pending' });

    // The platform DNS answers the name with HOST; an attempt made before it caught up is retried
    // 30 s later by the app's clock.
    await app.worker!.runDue({ task: 'issue_certificate' });
    await dns.caughtUp();
    app.clock.advance(60_000);
    await app.worker!.run('renew_certificates');
    await app.worker!.runDue({ task: 'issue_certificate' });
    const listed = await svcctl(['domains', 'custom', 'list', id, '-o', 'json']);
    expect(listed.code, listed.stderr).toBe(0);
    expect(json<{ limit: number; domains: { id: string; status: string }[] }>(listed.stdout)).toMatchObject({
      limit: 10,
      domains: [{ id: made.id, status: 'active' }],
    });

    const refused = await svcctl(['domains', 'custom', 'attach', id, '--hostname', 'www.unproven-cli.com']);
    expect(refused.code).toBe(ExitCode.conflict);
    expect(refused.stderr).toContain('http-name-refused');

    const detached = await svcctl(['domains', 'custom', 'detach', id, made.id]);
    expect(detached.code, detached.stderr).toBe(0);
    const gone = await svcctl(['domains', 'custom', 'detach', id, made.id]);
    expect(gone.code).toBe(ExitCode.notFound);
  });
});
