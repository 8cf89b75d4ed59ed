// Every operation in the spec × every kind of caller (document 1, "Authentication", "Personal API
// tokens and delegations"; DECISIONS.md §3): no credential, a full session, staff sessions elevated
// and not, API tokens with and without the operation's capability or scoped to another organization,
// an application as itself and acting as a user, each with and without the capability. The rows come
// from the operation index (matrix-support.ts), the requests from the spec's schemas (samples.ts),
// so an operation a later issue adds is tried here without new test code. A refusal must have the
// declared status and change nothing; an allowed caller must get past every check of who it is.
import { randomUUID } from 'node:crypto';
import { createClient, type components, type SvcClient } from '@svcplatform/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operations, type OperationIndexEntry } from '../../generated/operations.js';
import { CAPABILITIES, findCapability } from '../../server/src/authz/capabilities.js';
import { SYSTEM_PERMISSIONS } from '../../server/src/authz/system-permissions.js';
import { API_BASE_PATH } from '../../server/src/spec.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { newAccount } from '../support/auth.js';
import { png } from '../support/images.js';
import { startTestSmtp, type TestSmtp } from '../support/smtp.js';
import {
  callersOf,
  describeExpected,
  EVERY_CAPABILITY,
  EVERY_DELEGABLE,
  expectedFor,
  isStaffOperation,
  notAllowed,
  otherThan,
  stateReader,
  UNRELATED,
  type Answer,
  type Caller,
} from './matrix-support.js';
import { awaitOperation, provisionService } from '../support/services.js';
import { inShard } from '../support/shards.js';
import { plan, SUDO_PIN, type Fixtures, type Planned } from './samples.js';

let app: TestApp;
let smtp: TestSmtp;
let fixtures: Fixtures;
let image: Uint8Array;
let readState: () => Promise<Record<string, string>>;

interface Person {
  id: string;
  token: string;
  api: SvcClient;
}
/** U (owner of A), S (staff with every system permission), and their elevated tokens. */
let user: Person & { elevated: string };
let staff: Person & { elevated: string };
/** Organization B, of which U is a plain member: the other organization of the scoped tokens. */
let otherOrganizationId: string;
/** Application tokens: every capability, only me.read, only me.manage. */
const applicationTokens = new Map<string, string>();

const client = (token: string): SvcClient => createClient({ baseUrl: app.baseUrl, token, retries: 0 });

async function person(tag: string): Promise<Person> {
  const { session } = await newAccount(app, smtp, tag);
  return { id: session.user.id, token: session.token, api: client(session.token) };
}

let slugs = 0;
const slug = (tag: string) => `${tag}-${(slugs += 1)}-${randomUUID().slice(0, 8)}`;

/**
 * Registers the matrix's hooks and the tests of one shard: every `shards`-th operation from `shard`, in the
 * order below. The matrix is split over several test files so that parallel workers share it.
 */
export function callerMatrix(shard: number, shards: number): void {
  beforeAll(async () => {
    smtp = await startTestSmtp();
    app = await startTestApp({
      env: {
        SMTP_URL: smtp.url,
        SOURCE_RATE_LIMIT_SCALE: '1000',
        IMPORT_ALLOWED_NETWORKS: '127.0.0.1/32',
        // The domain connect routes answer 501 for everyone while the capability is off.
        CAPABILITIES: 'domain_connect',
      },
    });
    image = await png(8, 8);
    readState = await stateReader(app.sql);

    const [u, v, w, s] = await Promise.all([
      person('matrix-u'),
      person('matrix-v'),
      person('matrix-w'),
      person('matrix-s'),
    ]);
    user = { ...u, elevated: (await u.api.sudoSetup({ body: { pin: SUDO_PIN } })).token };
    await app.sql`update users set system_permissions = ${[...SYSTEM_PERMISSIONS]}::text[] where id = ${s.id}`;
    staff = { ...s, elevated: (await s.api.sudoSetup({ body: { pin: SUDO_PIN } })).token };

    const a = await u.api.organizationCreate({ body: { name: 'Matrix A', slug: slug('a') } });
    const p = await u.api.projectCreate({ path: { id: a.id }, body: { name: 'Matrix P', slug: slug('p') } });
    await u.api.memberAdd({ path: { id: a.id }, body: { user_id: w.id, role: 'member' } });
    const b = await v.api.organizationCreate({ body: { name: 'Matrix B', slug: slug('b') } });
    await v.api.memberAdd({ path: { id: b.id }, body: { user_id: u.id, role: 'member' } });
    otherOrganizationId = b.id;

    const avatar = await fetch(`${app.baseUrl}${API_BASE_PATH}/me/avatar`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${u.token}` },
      body: imageForm(),
    });
    expect(avatar.status).toBe(200);
    const assetId = (await u.api.meGet()).avatar_asset_id!;
    const oauthAccount = { provider: 'github', providerUserId: `matrix-${randomUUID()}` };
    await app.sql`
    insert into oauth_accounts (id, user_id, provider_id, provider_user_id, email, created_at)
    values (${randomUUID()}, ${u.id}, ${oauthAccount.provider}, ${oauthAccount.providerUserId}, null, ${app.clock.now()})`;

    const admin = client(staff.elevated);
    const register = async (capabilities: string[]) =>
      admin.adminApplicationCreate({
        body: { name: 'Matrix application', capabilities },
      });
    const [all, onlyRead, onlyManage, spare] = await Promise.all([
      register(EVERY_CAPABILITY),
      register(['me.read']),
      register(['me.manage']),
      register(['me.read']),
    ]);
    applicationTokens.set('*', all.token).set('me.read', onlyRead.token).set('me.manage', onlyManage.token);
    // The delegations acting-as uses: every capability U may delegate, or only the one "without" holds.
    for (const [application, capabilities] of [
      [all, EVERY_DELEGABLE],
      [onlyRead, ['me.read']],
      [onlyManage, ['me.manage']],
    ] as const) {
      await u.api.meDelegationGrant({
        body: { application_id: application.application.id, capabilities: [...capabilities] },
      });
    }

    // A real service in P, for the service-scoped checks below (document 2).
    const [service, gameService] = await Promise.all([
      provisionService(admin, { projectId: p.id, name: 'Matrix service' }),
      provisionService(admin, { projectId: p.id, productSlug: 'block-game', name: 'Matrix game' }),
    ]);
    const backup = await u.api.backupCreate({
      path: { id: service.serviceInstanceId, resource_id: service.volumeResourceId },
    });
    await awaitOperation(u.api, service.serviceInstanceId, backup.operation_id);
    const schedule = await u.api.scheduleCreate({
      path: { id: service.serviceInstanceId },
      body: { name: 'Matrix schedule', cron: '0 3 * * *', action: 'start' },
    });
    const site = await provisionService(admin, {
      projectId: p.id,
      productSlug: 'web-app',
      name: 'Matrix site',
    });
    await u.api.sftpUpdate({ path: { id: site.serviceInstanceId }, body: { enabled: true } });
    // Imports need the service stopped (power routes running on it are refused 409 either way).
    const stopped = await u.api.serviceInstancePower({
      path: { id: site.serviceInstanceId },
      body: { action: 'stop' },
    });
    await awaitOperation(u.api, site.serviceInstanceId, stopped.operation_id, 60_000);
    // An import that fails at once (nothing listens on the discard port) leaves a row to read; it ends
    // before any case runs, so nothing changes behind a refusal's read-back.
    const imported = await u.api.importStart({
      path: { id: site.serviceInstanceId },
      body: { host: '127.0.0.1', port: 9, username: 'matrix', password: 'matrix' },
    });
    await awaitOperation(u.api, site.serviceInstanceId, imported.operation_id);
    await u.api.fileWrite({
      path: { id: site.serviceInstanceId, resource_id: site.volumeResourceId },
      query: { path: '/matrix.txt' },
      body: { content: 'matrix' },
    });

    fixtures = {
      service: {
        id: service.serviceInstanceId,
        subscriptionId: service.subscriptionId,
        resourceId: service.primaryResourceId,
        volumeResourceId: service.volumeResourceId,
        backupId: backup.backup.id,
        scheduleId: schedule.id,
        operationId: service.operationId,
        siteId: site.serviceInstanceId,
        siteVolumeResourceId: site.volumeResourceId,
        importId: imported.id,
      },
      gameService: { id: gameService.serviceInstanceId },
      user: { id: u.id },
      organization: { id: a.id, slug: a.slug },
      project: { id: p.id, slug: p.slug },
      member: { id: w.id, sessionToken: w.token },
      outsider: { id: v.id },
      spareApplication: { id: spare.application.id },
      assetId,
      oauthAccount,
      now: () => app.clock.now(),
      fresh: {
        organization: async () =>
          (await u.api.organizationCreate({ body: { name: 'Throwaway', slug: slug('t') } })).id,
        project: async () =>
          (await u.api.projectCreate({ path: { id: a.id }, body: { name: 'Throwaway', slug: slug('t') } }))
            .id,
        member: async () => {
          await u.api.memberAdd({ path: { id: a.id }, body: { user_id: w.id, role: 'member' } });
          return w.id;
        },
        apiToken: async () =>
          (await u.api.meApiTokenCreate({ body: grant('me.read', { kind: 'all' }) })).token.id,
        delegation: async () => {
          await u.api.meDelegationGrant({
            body: { application_id: spare.application.id, capabilities: ['me.read'] },
          });
          return (await u.api.meDelegationList()).find((d) => d.application.id === spare.application.id)!.id;
        },
      },
    };
  }, 240_000);

  afterAll(async () => {
    await app?.close();
    await smtp?.close();
  });

  function imageForm(): FormData {
    const form = new FormData();
    form.append('file', new Blob([new Uint8Array(image)], { type: 'image/png' }), 'matrix.png');
    return form;
  }

  type Scope = { kind: 'all' } | { kind: 'organization'; id: string };
  type TokenRequest = components['schemas']['ApiTokenCreateRequest'];
  const grant = (capability: string, scope: Scope): TokenRequest => ({
    name: 'matrix',
    authorization: { grants: [{ capability, scope }] },
  });

  /** API tokens, minted on first use and kept: by owner, capability and scope. */
  const tokens = new Map<string, Promise<string>>();
  function tokenOf(
    owner: 'user' | 'staff',
    capability: string,
    scope: Scope = { kind: 'all' },
  ): Promise<string> {
    const adminOnly = !!findCapability(capability)?.systemPermission;
    // Staff power is granted once, all of it S may grant, in an admin-authorized token from an elevated session.
    const key = adminOnly ? 'staff:admin' : `${owner}:${capability}:${scope.kind}`;
    let minted = tokens.get(key);
    if (!minted) {
      const body: TokenRequest = adminOnly
        ? {
            name: 'matrix staff',
            admin_authorized: true,
            authorization: {
              grants: CAPABILITIES.filter((c) => c.systemPermission).map((c) => ({
                capability: c.name,
                scope: { kind: 'all' as const },
              })),
            },
          }
        : grant(capability, scope);
      const minter = adminOnly ? client(staff.elevated) : owner === 'staff' ? staff.api : user.api;
      minted = minter.meApiTokenCreate({ body }).then((r) => r.secret);
      tokens.set(key, minted);
    }
    return minted;
  }

  /** The headers that present one caller for one operation. */
  async function credentialOf(op: OperationIndexEntry, caller: Caller): Promise<Record<string, string>> {
    const owner = isStaffOperation(op) ? 'staff' : 'user';
    const cap = op.capability;
    const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
    const actingAs = (token: string) => ({ ...bearer(token), 'x-acting-as-user': user.id });
    switch (caller.key) {
      case 'none':
        return {};
      case 'session':
        if (owner === 'staff') return bearer(staff.elevated);
        return bearer(caller.elevated ? user.elevated : user.token);
      case 'session-not-elevated':
        return bearer(staff.token);
      case 'session-not-staff':
        return bearer(user.token);
      case 'session-not-staff-elevated':
        return bearer(user.elevated);
      case 'token-with':
        return bearer(await tokenOf(owner, cap ?? otherThan(cap)));
      case 'token-without':
        return bearer(await tokenOf(owner, cap ? otherThan(cap) : UNRELATED));
      case 'token-scoped-elsewhere':
        return bearer(await tokenOf('user', cap!, { kind: 'organization', id: otherOrganizationId }));
      case 'application':
        return bearer(applicationTokens.get('*')!);
      case 'application-without':
        return bearer(applicationTokens.get(otherThan(cap))!);
      case 'acting-as':
        return actingAs(applicationTokens.get('*')!);
      case 'acting-as-without':
        return actingAs(applicationTokens.get(otherThan(cap))!);
    }
  }

  async function send(request: Planned, headers: Record<string, string>): Promise<Answer> {
    const init: RequestInit = { method: request.method, headers };
    if (request.body && 'json' in request.body) {
      headers['content-type'] = 'application/json';
      init.body = JSON.stringify(request.body.json);
    } else if (request.body) init.body = request.body.form;
    const res = await fetch(`${app.baseUrl}${API_BASE_PATH}${request.url}`, init);
    const text = await res.text();
    const problem = res.headers.get('content-type')?.startsWith('application/problem+json')
      ? (JSON.parse(text) as { code?: string; detail?: string })
      : null;
    return { status: res.status, code: problem?.code ?? null, detail: problem?.detail ?? null };
  }

  // Reads first, then writes, deletes last: a write may change what a later read finds, never the reverse.
  const rank = (op: OperationIndexEntry) => (op.method === 'get' ? 0 : op.method === 'delete' ? 2 : 1);
  const every = Object.values(operations).sort((x, y) => rank(x) - rank(y));
  const ordered = every.filter(inShard(shard, shards));

  for (const op of ordered) {
    describe(`${op.operationId}: ${op.method.toUpperCase()} ${op.path}`, () => {
      for (const caller of callersOf(op)) {
        const want = expectedFor(op, caller);
        it(`${caller.label}: ${describeExpected(want)}`, async () => {
          const request = await plan(op, fixtures, image);
          const headers = await credentialOf(op, caller);
          if (want.allowed) {
            const answer = await send(request, headers);
            expect(notAllowed(op, request.unknownTarget, answer)).toEqual([]);
            return;
          }
          const before = await readState();
          const answer = await send(request, headers);
          expect([answer.status, answer.code], answer.detail ?? '').toEqual([want.status, want.code]);
          expect(await readState()).toEqual(before);
        });
      }
    });
  }

  /** An answer whole: status, media type and body, the request id aside (it differs by design). */
  async function sendWhole(request: Planned, headers: Record<string, string>) {
    const init: RequestInit = { method: request.method, headers: { ...headers } };
    if (request.body && 'json' in request.body) {
      (init.headers as Record<string, string>)['content-type'] = 'application/json';
      init.body = JSON.stringify(request.body.json);
    } else if (request.body) init.body = request.body.form;
    const res = await fetch(`${app.baseUrl}${API_BASE_PATH}${request.url}`, init);
    const text = await res.text();
    const type = res.headers.get('content-type');
    const body = type?.includes('json') ? (JSON.parse(text) as Record<string, unknown>) : text;
    if (typeof body === 'object' && body !== null) delete body.request_id;
    return { status: res.status, type, body };
  }

  // Seed 001 §5: on a service-scoped route a refusal, a token's or a delegation's missing capability
  // included, answers exactly as an unknown id. Every service-scoped operation of the index (later ones
  // too), every caller the matrix refuses, aimed at a real service the user owns: the answer must equal
  // the owner's own answer for an unknown service id with the same other parameters, and change nothing.
  const serviceScoped = ordered.filter((op) => op.serviceScoped);

  if (shard === 0)
    it('finds the service-scoped operations', () => {
      const allScoped = every.filter((op) => op.serviceScoped);
      expect(allScoped.map((op) => op.operationId)).toContain('serviceInstanceGet');
      expect(
        allScoped.every((op) => /^\/(service-instances|subscriptions)\//.test(op.path) || op.serviceScoped),
      ).toBe(true);
    });

  for (const op of serviceScoped) {
    describe(`service-scoped ${op.operationId}: ${op.method.toUpperCase()} ${op.path}`, () => {
      if (op.method === 'get') {
        it('the owner reads the fixture service (the refusals below are not of an unknown id)', async () => {
          const answer = await sendWhole(await plan(op, fixtures, image, 'fixture'), {
            authorization: `Bearer ${user.token}`,
          });
          expect(answer.status, JSON.stringify(answer.body)).toBeGreaterThanOrEqual(200);
          expect(answer.status).toBeLessThan(300);
        });
      }
      const refused = callersOf(op).filter((c) => c.kind !== null && !expectedFor(op, c).allowed);
      for (const caller of refused) {
        it(`${caller.label}: answers as an unknown service`, async () => {
          const unknown = await sendWhole(await plan(op, fixtures, image, 'unknown'), {
            authorization: `Bearer ${user.token}`,
          });
          expect(unknown.status).toBe(404);
          // The credential first: minting it (on first use) is a change of its own.
          const [request, headers] = [
            await plan(op, fixtures, image, 'fixture'),
            await credentialOf(op, caller),
          ];
          const before = await readState();
          const answer = await sendWhole(request, headers);
          expect(answer).toEqual(unknown);
          expect(await readState()).toEqual(before);
        });
      }
    });
  }
}
