// The gateway's caps and probes: open sockets per user and per resource (429 before the ticket is spent,
// so the caller may use it once a socket closed), the gateway's /healthz and the `gateway` section of the
// API's /readyz.
import { afterAll, beforeAll, expect, it } from 'vitest';
import type WebSocket from 'ws';
import { openConsoleSocket } from '@svcplatform/sdk';
import { staffMember } from '../admin-content/staff.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { signedIn, type Caller } from '../support/organizations.js';
import { provisionService, type Provisioned } from '../support/services.js';
import { startTestSmtp, type TestSmtp } from '../support/smtp.js';
import { closeOf, refusedStatus } from './sockets.js';

let app: TestApp;
let smtp: TestSmtp;
let owner: Caller;
let member: Caller;
let game: Provisioned;

beforeAll(async () => {
  smtp = await startTestSmtp();
  app = await startTestApp({
    env: {
      SMTP_URL: smtp.url,
      SOURCE_RATE_LIMIT_SCALE: '1000',
      GATEWAY_MAX_CONNECTIONS_PER_USER: '2',
      GATEWAY_MAX_CONNECTIONS_PER_RESOURCE: '3',
    },
    gateway: true,
  });
  const staff = await staffMember(app, smtp, 'lim-staff', ['manage_services']);
  [owner, member] = await Promise.all([signedIn(app, smtp, 'lim-owner'), signedIn(app, smtp, 'lim-member')]);
  const orgId = (
    await owner.api.organizationCreate({ body: { name: 'Caps', slug: `caps-${Date.now().toString(36)}` } })
  ).id;
  await owner.api.memberAdd({ path: { id: orgId }, body: { user_id: member.userId, role: 'member' } });
  const projectId = (
    await owner.api.projectCreate({ path: { id: orgId }, body: { name: 'Main', slug: 'main' } })
  ).id;
  game = await provisionService(staff.elevated, { projectId, productSlug: 'arena-game', name: 'Arena' });
}, 120_000);
afterAll(async () => {
  await app?.close();
  await smtp?.close();
});

const ticket = (caller: Caller) =>
  caller.api.consoleTicketCreate({
    path: { id: game.serviceInstanceId, resource_id: game.primaryResourceId },
  });

it('caps open sockets per user and per resource with 429, leaving the ticket unspent', async () => {
  const open: WebSocket[] = [];
  open.push(
    await openConsoleSocket((await ticket(owner)).url),
    await openConsoleSocket((await ticket(owner)).url),
  );
  const third = await ticket(owner);
  expect(await refusedStatus(third.url)).toBe(429);
  open.push(await openConsoleSocket((await ticket(member)).url));
  // The resource's cap (3) is reached though the member has one socket only.
  const fourth = await ticket(member);
  expect(await refusedStatus(fourth.url)).toBe(429);
  const [row] = await app.sql<
    { n: number }[]
  >`select count(*)::int as n from gateway_tickets where redeemed_at is not null`;
  expect(row!.n).toBe(3);
  // A socket closes: the refused ticket, unspent, now opens.
  const closed = closeOf(open[0]!);
  open[0]!.close();
  await closed;
  await expect.poll(() => app.gateway!.connections).toBe(2);
  open[0] = await openConsoleSocket(third.url);
  for (const ws of open) ws.close();
});

it('answers /healthz on the gateway and reports it in the API’s /readyz', async () => {
  const gatewayBase = `http://127.0.0.1:${(app.gateway!.server.address() as { port: number }).port}`;
  const health = await fetch(`${gatewayBase}/healthz`);
  expect(health.status).toBe(200);
  expect(await health.json()).toMatchObject({ status: 'ok' });
  const ready = await fetch(`${app.baseUrl}/readyz`);
  expect(await ready.json()).toEqual({ status: 'ok', gateway: { status: 'ok', instances: 1 } });
  await app.gateway!.close();
  expect(await (await fetch(`${app.baseUrl}/readyz`)).json()).toEqual({
    status: 'ok',
    gateway: { status: 'unavailable', instances: 0 },
  });
});
