// Passkey elevation through the whole stack with a software authenticator: registration with "none" and
// "packed" attestation, authentication with the signature counter, every refusal the relying party owes
// (seed document 1, "Elevation", "Authentication", "Errors", "Limits"), and the shared attempt limit.
import { createClient, SvcApiError, type components } from '@svcplatform/sdk';
import type { PublicKeyCredentialCreationOptionsJSON } from '@simplewebauthn/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.js';
import { newAccount } from '../support/auth.js';
import { startTestSmtp, type TestSmtp } from '../support/smtp.js';
import { SoftAuthenticator, type AssertionJSON } from '../support/soft-authenticator.js';

const ORIGIN = 'https://panel.example.test';
const RP_ID = 'panel.example.test';
const MINUTE = 60_000;
const AUTH_FAILED = 'The passkey could not be verified: ask for new authentication options and try again.';

let app: TestApp;
let smtp: TestSmtp;

beforeAll(async () => {
  smtp = await startTestSmtp();
  app = await startTestApp({
    env: { SMTP_URL: smtp.url, SOURCE_RATE_LIMIT_SCALE: '1000', PUBLIC_BASE_URL: ORIGIN },
  });
});
afterAll(async () => {
  await app?.close();
  await smtp?.close();
});

type Client = ReturnType<typeof createClient>;
const clientFor = (token: string): Client => createClient({ baseUrl: app.baseUrl, token, retries: 0 });

// The tests send faulty credentials on purpose: any object goes where the SDK expects the browser's JSON.
type CredentialJson = components['schemas']['PublicKeyCredentialJson'];
const credentialBody = (credential: object) => ({ body: { credential: credential as CredentialJson } });

async function refusal(p: Promise<unknown>): Promise<{ status: number; code: string; detail: string }> {
  try {
    await p;
  } catch (e) {
    if (e instanceof SvcApiError) return { status: e.status, code: e.code, detail: e.detail };
    throw e;
  }
  throw new Error('expected a refusal');
}

/** A signed-in person with a software authenticator; `api` uses the sign-in (un-elevated) token. */
async function person(tag: string) {
  const { session } = await newAccount(app, smtp, tag);
  return {
    userId: session.user.id,
    token: session.token,
    refreshToken: session.refresh_token,
    api: clientFor(session.token),
    authr: new SoftAuthenticator(),
  };
}
type Person = Awaited<ReturnType<typeof person>>;

/** Registers a passkey (the first method needs no elevation) and answers the elevated token. */
async function withPasskey(tag: string) {
  const p = await person(tag);
  const options = await p.api.sudoWebauthnRegisterOptions();
  const { json, credential } = p.authr.create(options, { origin: ORIGIN });
  const elevated = await p.api.sudoWebauthnRegister(credentialBody(json));
  return { ...p, credential, elevated };
}

const passkeys = (userId: string) =>
  app.sql<{ credential_id: string; sign_count: string; last_used_at: Date | null; public_key: Buffer }[]>`
    select credential_id, sign_count, last_used_at, public_key from webauthn_credentials
    where user_id = ${userId} order by created_at, credential_id collate "C"`;
const challenges = (userId: string) =>
  app.sql<{ purpose: string; challenge: string }[]>`
    select purpose, challenge from webauthn_challenges where user_id = ${userId} order by challenge`;

/** The authenticate call as raw HTTP, to compare refusal bodies byte for byte. */
async function authenticateRaw(token: string, credential: object): Promise<{ status: number; text: string }> {
  const res = await fetch(`${app.baseUrl}/api/v2/auth/sudo/webauthn/authenticate`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ credential }),
  });
  return { status: res.status, text: await res.text() };
}

describe('registration', () => {
  it('registers a passkey with "none" attestation, spends the challenge and answers an elevated token', async () => {
    const p = await person('reg-none');
    const options = await p.api.sudoWebauthnRegisterOptions();
    expect(options).toMatchObject({
      rp: { id: RP_ID },
      user: { id: Buffer.from(p.userId.replace(/-/g, ''), 'hex').toString('base64url') },
      timeout: 5 * MINUTE,
      attestation: 'none',
      excludeCredentials: [],
      authenticatorSelection: { userVerification: 'preferred' },
    });
    expect(await challenges(p.userId)).toEqual([{ purpose: 'register', challenge: options.challenge }]);

    const { json, credential } = p.authr.create(options, { origin: ORIGIN });
    const answer = await p.api.sudoWebauthnRegister(credentialBody(json));
    expect(answer.elevated_until).toBe(new Date(app.clock.now().getTime() + 8 * 60 * MINUTE).toISOString());

    const status = await clientFor(answer.token).sudoStatusGet();
    expect(status).toMatchObject({ is_elevated: true, elevated_until: answer.elevated_until });
    expect(status.enrolled_methods).toContain('webauthn');
    // The presented token stays un-elevated.
    expect(await p.api.sudoStatusGet()).toMatchObject({ is_elevated: false, elevated_until: null });

    const [row] = await app.sql`
      select credential_id, public_key, sign_count, transports, device_type, backed_up
      from webauthn_credentials where user_id = ${p.userId}`;
    expect(row).toEqual({
      credential_id: json.id,
      public_key: credential.cosePublicKey,
      sign_count: '0',
      transports: ['internal'],
      device_type: 'singleDevice',
      backed_up: false,
    });
    expect(await challenges(p.userId)).toEqual([]);
  });

  it('accepts "packed" self attestation', async () => {
    const p = await person('reg-packed');
    const options = await p.api.sudoWebauthnRegisterOptions();
    const { json } = p.authr.create(options, { origin: ORIGIN, attestation: 'packed' });
    const answer = await p.api.sudoWebauthnRegister(credentialBody(json));
    expect((await clientFor(answer.token).sudoStatusGet()).is_elevated).toBe(true);
    expect((await passkeys(p.userId)).map((r) => r.credential_id)).toEqual([json.id]);
  });

  it('needs an elevated session for a second passkey, and then excludes the first', async () => {
    const p = await withPasskey('reg-second');
    const before = await passkeys(p.userId);

    expect(await refusal(p.api.sudoWebauthnRegisterOptions())).toMatchObject({
      status: 403,
      code: 'elevation-required',
    });
    expect(await challenges(p.userId)).toEqual([]);

    const elevated = clientFor(p.elevated.token);
    const options = await elevated.sudoWebauthnRegisterOptions();
    expect((options as PublicKeyCredentialCreationOptionsJSON).excludeCredentials).toEqual([
      { id: before[0]!.credential_id, type: 'public-key', transports: ['internal'] },
    ]);
    const { json } = p.authr.create(options, { origin: ORIGIN });
    // The un-elevated token cannot finish the ceremony the elevated one started; the challenge survives.
    expect(await refusal(p.api.sudoWebauthnRegister(credentialBody(json)))).toMatchObject({
      status: 403,
      code: 'elevation-required',
    });
    expect(await passkeys(p.userId)).toEqual(before);
    expect(await challenges(p.userId)).toHaveLength(1);

    await elevated.sudoWebauthnRegister(credentialBody(json));
    expect((await passkeys(p.userId)).map((r) => r.credential_id)).toEqual(
      [before[0]!.credential_id, json.id].sort((a, b) => (a < b ? -1 : 1)),
    );
  });

  // Each case: a fresh person asks for options and answers them with a fault; nothing is kept.
  type Faulty = { credential: object; api?: Client };
  type Fault = (p: Person, challenge: string) => Promise<Faulty> | Faulty;
  const at = (challenge: string) => ({ challenge, rp: { id: RP_ID }, user: { id: '' } });
  const refusals: [string, { fault: Fault; reason: RegExp }][] = [
    [
      'a spent challenge',
      {
        fault: async (p, challenge) => {
          const { json } = p.authr.create(at(challenge), { origin: ORIGIN });
          const { token } = await p.api.sudoWebauthnRegister(credentialBody(json));
          // Replayed by an elevated session, so only the challenge can be what is refused.
          return {
            credential: p.authr.create(at(challenge), { origin: ORIGIN }).json,
            api: clientFor(token),
          };
        },
        reason: /challenge is unknown, expired .* or already used/,
      },
    ],
    [
      'an expired challenge',
      {
        fault: (p, challenge) => {
          app.clock.advance(5 * MINUTE + 1000);
          return { credential: p.authr.create(at(challenge), { origin: ORIGIN }).json };
        },
        reason: /challenge is unknown, expired/,
      },
    ],
    [
      "another person's challenge",
      {
        fault: async (p) => {
          const other = await person('reg-other');
          const theirs = await other.api.sudoWebauthnRegisterOptions();
          return { credential: p.authr.create(theirs, { origin: ORIGIN }).json };
        },
        reason: /challenge is unknown/,
      },
    ],
    [
      'another origin',
      {
        fault: (p, challenge) => ({
          credential: p.authr.create(at(challenge), { origin: 'https://evil.example' }).json,
        }),
        reason: /origin this platform does not accept/,
      },
    ],
    [
      'another relying party id',
      {
        fault: (p, challenge) => ({
          credential: p.authr.create(at(challenge), { origin: ORIGIN, rpId: 'evil.example' }).json,
        }),
        reason: /another relying party than "panel\.example\.test"/,
      },
    ],
    [
      'something that is not a registration',
      {
        fault: () => ({ credential: { id: 'abc', rawId: 'abc', type: 'public-key', response: {} } }),
        reason: /not a passkey registration/,
      },
    ],
    [
      'a packed attestation whose signature does not verify',
      {
        fault: (p, challenge) => {
          const { json } = p.authr.create(at(challenge), { origin: ORIGIN, attestation: 'packed' });
          // The client data the signature covered is not the one sent.
          const client = JSON.parse(Buffer.from(json.response.clientDataJSON, 'base64url').toString());
          const altered = Buffer.from(JSON.stringify({ ...client, extra: 1 })).toString('base64url');
          return { credential: { ...json, response: { ...json.response, clientDataJSON: altered } } };
        },
        reason: /attestation/,
      },
    ],
  ];

  it.each(refusals)(
    'refuses %s with 400 invalid-field-value and a reason, keeping nothing',
    async (_name, c) => {
      const p = await person('reg-refused');
      const options = await p.api.sudoWebauthnRegisterOptions();
      const start = app.clock.now();
      try {
        const { credential, api = p.api } = await c.fault(p, options.challenge);
        const before = await passkeys(p.userId);
        const r = await refusal(api.sudoWebauthnRegister(credentialBody(credential)));
        expect(r).toMatchObject({ status: 400, code: 'invalid-field-value' });
        expect(r.detail).toMatch(c.reason);
        expect(await passkeys(p.userId)).toEqual(before);
        if (before.length === 0) expect((await p.api.sudoStatusGet()).enrolled_methods).toEqual([]);
      } finally {
        app.clock.set(start);
      }
    },
  );
});

describe('authentication', () => {
  it('elevates with a registered passkey and stores the advancing counter', async () => {
    const p = await withPasskey('auth-ok');
    const options = await p.api.sudoWebauthnAuthenticateOptions();
    expect(options).toMatchObject({
      rpId: RP_ID,
      userVerification: 'preferred',
      timeout: 5 * MINUTE,
      allowCredentials: [
        {
          id: Buffer.from(p.credential.id).toString('base64url'),
          type: 'public-key',
          transports: ['internal'],
        },
      ],
    });
    const answer = await p.api.sudoWebauthnAuthenticate(
      credentialBody(p.authr.get(options, { origin: ORIGIN })),
    );
    expect((await clientFor(answer.token).sudoStatusGet()).is_elevated).toBe(true);
    expect(await passkeys(p.userId)).toMatchObject([{ sign_count: '1', last_used_at: app.clock.now() }]);
    expect(await challenges(p.userId)).toEqual([]);

    const again = await p.api.sudoWebauthnAuthenticateOptions();
    await p.api.sudoWebauthnAuthenticate(credentialBody(p.authr.get(again, { origin: ORIGIN })));
    expect(await passkeys(p.userId)).toMatchObject([{ sign_count: '2' }]);
  });

  it('refuses options for an account with no passkey, saying so', async () => {
    const p = await person('auth-none');
    const r = await refusal(p.api.sudoWebauthnAuthenticateOptions());
    expect(r).toMatchObject({ status: 400, code: 'invalid-field-value' });
    expect(r.detail).toMatch(/no passkey/);
    expect(await challenges(p.userId)).toEqual([]);
  });

  // Each case: a person with a passkey already used once (stored counter 1) answers fresh options
  // with a fault. Every one gets the same body apart from request_id, and nothing changes.
  type Setup = Awaited<ReturnType<typeof withPasskey>>;
  const faults: [
    string,
    (
      p: Setup,
      options: { challenge: string; allowCredentials?: { id: string }[] },
    ) => Promise<AssertionJSON> | AssertionJSON,
  ][] = [
    [
      'a replayed (spent) challenge',
      async (p) => {
        const used = await p.api.sudoWebauthnAuthenticateOptions();
        await p.api.sudoWebauthnAuthenticate(credentialBody(p.authr.get(used, { origin: ORIGIN })));
        return p.authr.get(used, { origin: ORIGIN });
      },
    ],
    [
      'an expired challenge',
      (p, options) => {
        app.clock.advance(5 * MINUTE + 1000);
        return p.authr.get(options, { origin: ORIGIN });
      },
    ],
    [
      "another user's challenge",
      async (p) => {
        const other = await withPasskey('auth-other');
        const theirs = await other.api.sudoWebauthnAuthenticateOptions();
        return p.authr.get(
          { ...theirs, allowCredentials: undefined },
          { origin: ORIGIN, credential: p.credential },
        );
      },
    ],
    [
      'a registration challenge',
      async (p) => {
        const reg = await clientFor(p.elevated.token).sudoWebauthnRegisterOptions();
        return p.authr.get(
          { challenge: reg.challenge, rpId: RP_ID },
          { origin: ORIGIN, credential: p.credential },
        );
      },
    ],
    ['another origin', (p, options) => p.authr.get(options, { origin: 'https://evil.example' })],
    [
      'another relying party id',
      (p, options) => p.authr.get(options, { origin: ORIGIN, rpId: 'evil.example' }),
    ],
    [
      'an unknown credential',
      (_p, options) => {
        const stranger = new SoftAuthenticator();
        const { credential } = stranger.create(
          { challenge: options.challenge, rp: { id: RP_ID } },
          { origin: ORIGIN },
        );
        return stranger.get(options, { origin: ORIGIN, credential });
      },
    ],
    [
      "another user's credential",
      async (_p, options) => {
        const other = await withPasskey('auth-theirs');
        return other.authr.get(options, { origin: ORIGIN, credential: other.credential });
      },
    ],
    [
      'a bad signature',
      (p, options) => {
        const json = p.authr.get(options, { origin: ORIGIN });
        const sig = Buffer.from(json.response.signature, 'base64url');
        sig[sig.length - 1]! ^= 0x01;
        return { ...json, response: { ...json.response, signature: sig.toString('base64url') } };
      },
    ],
    ['a counter that did not advance', (p, options) => p.authr.get(options, { origin: ORIGIN, counter: 1 })],
    ['a counter that went back', (p, options) => p.authr.get(options, { origin: ORIGIN, counter: 0 })],
  ];
  const bodies: string[] = [];

  it.each(faults)('refuses %s with the one 400 invalid-field-value', async (_name, fault) => {
    const p = await withPasskey('auth-refused');
    const first = await p.api.sudoWebauthnAuthenticateOptions();
    await p.api.sudoWebauthnAuthenticate(credentialBody(p.authr.get(first, { origin: ORIGIN })));
    const options = await p.api.sudoWebauthnAuthenticateOptions();
    const start = app.clock.now();
    try {
      const assertion = await fault(p, options);
      const before = await passkeys(p.userId);
      expect(before).toMatchObject([{ sign_count: expect.stringMatching(/^[12]$/) }]);
      const { status, text } = await authenticateRaw(p.token, assertion);
      expect(status).toBe(400);
      expect(JSON.parse(text)).toMatchObject({ code: 'invalid-field-value', detail: AUTH_FAILED });
      bodies.push(text.replace(/"request_id":"[^"]*"/, '"request_id":"-"'));
      expect(await passkeys(p.userId)).toEqual(before);
    } finally {
      app.clock.set(start);
    }
  });

  it('answers every one of those failures with the same bytes apart from request_id', () => {
    expect(bodies).toHaveLength(faults.length);
    expect(new Set(bodies).size).toBe(1);
  });

  it("spends only the caller's own challenge: another user's stays usable", async () => {
    const [me, other] = [await withPasskey('auth-spend-me'), await withPasskey('auth-spend-other')];
    const theirs = await other.api.sudoWebauthnAuthenticateOptions();
    const forged = me.authr.get(
      { ...theirs, allowCredentials: undefined },
      { origin: ORIGIN, credential: me.credential },
    );
    expect((await authenticateRaw(me.token, forged)).status).toBe(400);
    expect(await challenges(other.userId)).toEqual([
      { purpose: 'authenticate', challenge: theirs.challenge },
    ]);
    await other.api.sudoWebauthnAuthenticate(credentialBody(other.authr.get(theirs, { origin: ORIGIN })));
  });
});

describe('attempt limit', () => {
  it('counts passkey attempts: five failures in 15 minutes, then 429 even for a good assertion', async () => {
    const p = await withPasskey('limit');
    const start = app.clock.now();
    try {
      for (let i = 0; i < 5; i += 1) {
        const options = await p.api.sudoWebauthnAuthenticateOptions();
        const bad = p.authr.get(options, { origin: 'https://evil.example' });
        expect((await authenticateRaw(p.token, bad)).status).toBe(400);
      }
      const options = await p.api.sudoWebauthnAuthenticateOptions();
      const before = await passkeys(p.userId);
      const good = p.authr.get(options, { origin: ORIGIN });
      const err = await p.api.sudoWebauthnAuthenticate(credentialBody(good)).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(SvcApiError);
      expect(err).toMatchObject({ status: 429, code: 'rate-limited' });
      expect((err as SvcApiError).retryAfter).toBeGreaterThan(0);
      expect(await passkeys(p.userId)).toEqual(before);
      // The refused attempt did not get to spend the challenge.
      expect((await challenges(p.userId)).map((c) => c.challenge)).toContain(options.challenge);

      // Registration attempts share the bucket.
      const reg = await clientFor(p.elevated.token).sudoWebauthnRegisterOptions();
      const regJson = p.authr.create(reg, { origin: ORIGIN }).json;
      expect(
        await refusal(clientFor(p.elevated.token).sudoWebauthnRegister(credentialBody(regJson))),
      ).toMatchObject({
        status: 429,
        code: 'rate-limited',
      });

      // Once the window has passed the passkey works again (the access token expired meanwhile: refresh).
      app.clock.advance(30 * MINUTE);
      const { token } = await createClient({ baseUrl: app.baseUrl, retries: 0 }).authRefresh({
        body: { refresh_token: p.refreshToken },
      });
      const api = clientFor(token);
      const later = await api.sudoWebauthnAuthenticateOptions();
      const answer = await api.sudoWebauthnAuthenticate(
        credentialBody(p.authr.get(later, { origin: ORIGIN })),
      );
      expect((await clientFor(answer.token).sudoStatusGet()).is_elevated).toBe(true);
    } finally {
      app.clock.set(start);
    }
  });
});
