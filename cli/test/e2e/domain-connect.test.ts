// svcctl domains connect link | list | verify | release against the real server, with the test DNS
// server as the customer's zone and a loopback DNS provider: the apply URL printed, verify's exit code
// following the live SRV record, a refusal's exit code, the table of links.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { staffMember } from '../../../test/admin-content/staff.js';
import { startTestApp, type TestApp } from '../../../test/support/app.js';
import { newAccount } from '../../../test/support/auth.js';
import { startTestDns, type TestDns } from '../../../test/support/dns.js';
import {
  startTestProvider,
  syncSettings,
  type TestProvider,
} from '../../../test/support/domain-connect-provider.js';
import { randomPortPool } from '../../../test/support/edge.js';
import { provisionService, type Provisioned } from '../../../test/support/services.js';
import { startTestSmtp, type TestSmtp } from '../../../test/support/smtp.js';
import { ExitCode } from '../../src/exit-codes.js';
import { ensureBuilt } from '../support/build.js';
import { runCli } from '../support/run-cli.js';

let app: TestApp;
let smtp: TestSmtp;
let dns: TestDns;
let provider: TestProvider;
let token: string;
let game: Provisioned;

beforeAll(async () => {
  ensureBuilt();
  smtp = await startTestSmtp();
  dns = await startTestDns();
  provider = await startTestProvider();
  provider.templates.add('svcplatform.net/minecraft-srv');
  dns.setTxt('_domainconnect.cli-castle.com', `127.0.0.1:${provider.port}`);
  provider.settings.set('cli-castle.com', syncSettings(`127.0.0.1:${provider.port}`));
  app = await startTestApp({
    env: {
      SMTP_URL: smtp.url,
      SOURCE_RATE_LIMIT_SCALE: '1000',
      PORT_POOL: randomPortPool(10),
      PLATFORM_DOMAIN: 'svcplatform.net',
      DNS_SERVERS: dns.server,
      CAPABILITIES: 'domain_connect',
      DOMAIN_CONNECT_ALLOWED_NETWORKS: '127.0.0.1/32',
      DOMAIN_CONNECT_PROVIDER_ID: 'svcplatform.net',
      DOMAIN_CONNECT_SERVICE_ID: 'minecraft-srv',
    },
  });
  const owner = await newAccount(app, smtp, 'dcc-owner');
  const staff = await staffMember(app, smtp, 'dcc-staff', ['manage_services']);
  token = owner.session.token;
  const [personal] = await app.sql<{ id: string }[]>`
    select id from organizations where personal_owner_id = ${owner.session.user.id}`;
  const [project] = await app.sql<{ id: string }[]>`
    select id from projects where organization_id = ${personal!.id} order by created_at limit 1`;
  game = await provisionService(staff.elevated, {
    projectId: project!.id,
    productSlug: 'block-game',
    name: 'Cli game',
  });
}, 180_000);
afterAll(async () => {
  await app?.close();
  await provider?.close();
  await dns?.close();
  await smtp?.close();
});

const svcctl = (args: string[]) =>
  runCli(args, { env: { SVCCTL_BASE_URL: app.baseUrl, SVCCTL_TOKEN: token } });
const json = <T>(stdout: string) => JSON.parse(stdout) as T;

describe('svcctl domains connect', () => {
  it('links, lists, verifies (exit 10 until the SRV record is there) and releases', async () => {
    const id = game.serviceInstanceId;
    const linked = await svcctl([
      'domains',
      'connect',
      'link',
      id,
      '--domain',
      'cli-castle.com',
      '--host',
      'play',
      '-o',
      'json',
    ]);
    expect(linked.code, linked.stderr).toBe(0);
    const link = json<{ id: string; apply_url: string; srv_target: string; srv_port: number }>(linked.stdout);
    expect(link.apply_url).toContain(
      `http://127.0.0.1:${provider.port}/sync/v2/domainTemplates/providers/svcplatform.net/services/minecraft-srv/apply?domain=cli-castle.com&host=play`,
    );

    const again = await svcctl([
      'domains',
      'connect',
      'link',
      id,
      '--domain',
      'cli-castle.com',
      '--host',
      'play',
    ]);
    expect(again.code).toBe(ExitCode.conflict);
    expect(again.stderr).toContain('domain-connect-refused');

    const table = await svcctl(['domains', 'connect', 'list', id, '-o', 'table']);
    expect(table.code, table.stderr).toBe(0);
    expect(table.stdout).toMatch(/ID\s+HOSTNAME\s+STATUS\s+SRV/);
    expect(table.stdout).toContain(`play.cli-castle.com`);
    expect(table.stdout).toContain(`${link.srv_target}:${link.srv_port}`);
    expect(table.stdout).toContain('1 of 20 links');

    const pending = await svcctl(['domains', 'connect', 'verify', id, link.id, '-o', 'json']);
    expect(pending.code).toBe(ExitCode.checkFailed);
    expect(json<{ status: string }>(pending.stdout).status).toBe('pending');
    expect(pending.stderr).toContain('play.cli-castle.com is not active (status pending)');

    dns.setSrv('_minecraft._tcp.play.cli-castle.com', { target: link.srv_target, port: link.srv_port });
    const active = await svcctl(['domains', 'connect', 'verify', id, link.id, '-o', 'json']);
    expect(active.code, active.stderr).toBe(0);
    expect(json<{ status: string }>(active.stdout).status).toBe('active');

    const released = await svcctl(['domains', 'connect', 'release', id, link.id]);
    expect(released.code, released.stderr).toBe(0);
    const gone = await svcctl(['domains', 'connect', 'release', id, link.id]);
    expect(gone.code).toBe(ExitCode.notFound);
  });
});
