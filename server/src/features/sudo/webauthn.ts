// Passkey elevation (seed document 1, "Elevation", "Elevation of a session"; DECISIONS.md §3): WebAuthn
// registration and authentication ceremonies against single-use server-side challenges that live five
// minutes. The relying party is ctx.config.webauthn. Who may register, how attempts are counted and
// the elevated answer are shared with the other methods (elevation.ts).
//
// Choices (also in the spec's descriptions):
// - userVerification "preferred", and user verification is not required when verifying: the session
//   already passed the password and the emailed code, the passkey proves possession, and a security
//   key without a PIN must still work. User presence is always required.
// - Attestation: the options ask for "none"; "none" and "packed" (self or full, not chained to any
//   root: attestation is not used to decide trust) are accepted. Other formats are refused, which also
//   keeps certificate revocation fetches (URLs from the caller's certificates) out of the server.
import { createHash } from 'node:crypto';
import {
  generateAuthenticationOptions,
  generateRegistrationOptions,
  verifyAuthenticationResponse,
  verifyRegistrationResponse,
  type AuthenticationResponseJSON,
  type RegistrationResponseJSON,
} from '@simplewebauthn/server';
import { decodeAttestationObject, parseAuthenticatorData } from '@simplewebauthn/server/helpers';
import { unauthenticated } from '../../http/authenticate.js';
import { invalidFieldValue } from '../../http/errors.js';
import type { AreaHandlers, RequestContext } from '../../http/handler.js';
import { findUserById } from '../auth/store.js';
import { elevatedToken, elevationAttempt, requireAvailable, requireSetupAllowed } from './elevation.js';
import * as store from './store.js';

/** Seed "Limits": the passkey challenge window. */
export const CHALLENGE_SECONDS = 5 * 60;
/** Live challenges kept per user and ceremony (several tabs may be mid-ceremony); older ones go. */
const LIVE_CHALLENGES = 10;
/** EdDSA, ES256, RS256: offered in the options and required of the registered key alike. */
const ALGORITHMS = [-8, -7, -257];
const ACCEPTED_ATTESTATION = new Set(['none', 'packed']);
const TRANSPORTS = new Set(['ble', 'cable', 'hybrid', 'internal', 'nfc', 'smart-card', 'usb']);

// Seed "Authentication": all passkey authentication failures answer identically.
const AUTHENTICATION_FAILED =
  'The passkey could not be verified: ask for new authentication options and try again.';
const authenticationFailed = () =>
  invalidFieldValue(AUTHENTICATION_FAILED, [
    { location: 'body', pointer: '/credential', message: 'not verified' },
  ]);
// Registration refusals say why (seed "Errors": "a human-readable reason").
const registrationRefused = (reason: string) =>
  invalidFieldValue(reason, [{ location: 'body', pointer: '/credential', message: 'refused' }]);

export const webauthnHandlers: AreaHandlers<
  | 'sudoWebauthnRegisterOptions'
  | 'sudoWebauthnRegister'
  | 'sudoWebauthnAuthenticateOptions'
  | 'sudoWebauthnAuthenticate'
> = {
  async sudoWebauthnRegisterOptions({ auth, ctx }) {
    await requireSetupAllowed(ctx, auth, 'webauthn');
    const user = await findUserById(ctx.sql, auth.userId);
    if (!user) throw unauthenticated();
    const passkeys = await store.listPasskeys(ctx.sql, auth.userId);
    const options = await generateRegistrationOptions({
      rpName: ctx.config.webauthn.rpName,
      rpID: ctx.config.webauthn.rpId,
      userName: user.email ?? user.name,
      userDisplayName: user.name,
      userID: userHandle(auth.userId),
      timeout: CHALLENGE_SECONDS * 1000,
      attestationType: 'none',
      excludeCredentials: passkeys.map((p) => ({ id: p.credential_id, transports: p.transports })),
      authenticatorSelection: { residentKey: 'preferred', userVerification: 'preferred' },
      supportedAlgorithmIDs: ALGORITHMS,
    });
    await keepChallenge(ctx, auth.userId, 'register', options.challenge);
    return { status: 200, body: options };
  },

  async sudoWebauthnRegister({ body, auth, ctx }) {
    await requireSetupAllowed(ctx, auth, 'webauthn');
    return {
      status: 200,
      body: await elevationAttempt(ctx, auth.userId, async () => {
        const passkey = await verifyRegistration(ctx, auth.userId, body.credential);
        if (!(await store.insertPasskey(ctx.sql, { userId: auth.userId, ...passkey }, ctx.clock.now()))) {
          throw registrationRefused('This passkey is already registered.');
        }
        return elevatedToken(ctx, auth);
      }),
    };
  },

  async sudoWebauthnAuthenticateOptions({ auth, ctx }) {
    requireAvailable(ctx, 'webauthn');
    const passkeys = await store.listPasskeys(ctx.sql, auth.userId);
    if (passkeys.length === 0) {
      throw invalidFieldValue(
        'This account has no passkey: register one first (POST /auth/sudo/webauthn/register-options).',
      );
    }
    const options = await generateAuthenticationOptions({
      rpID: ctx.config.webauthn.rpId,
      allowCredentials: passkeys.map((p) => ({ id: p.credential_id, transports: p.transports })),
      timeout: CHALLENGE_SECONDS * 1000,
      userVerification: 'preferred',
    });
    await keepChallenge(ctx, auth.userId, 'authenticate', options.challenge);
    return { status: 200, body: options };
  },

  async sudoWebauthnAuthenticate({ body, auth, ctx }) {
    requireAvailable(ctx, 'webauthn');
    return {
      status: 200,
      body: await elevationAttempt(ctx, auth.userId, async () => {
        const failure = await assertionFailure(ctx, auth.userId, body.credential);
        if (failure !== null) {
          // The reason goes to the log only: the caller learns nothing of which check failed.
          ctx.log.info(
            { request_id: ctx.requestId, user_id: auth.userId, reason: failure },
            'passkey authentication refused',
          );
          throw authenticationFailed();
        }
        return elevatedToken(ctx, auth);
      }),
    };
  },
};

/** The WebAuthn user handle: the user id's 16 bytes (no personal data, stable across registrations). */
function userHandle(userId: string): Uint8Array<ArrayBuffer> {
  return new Uint8Array(Buffer.from(userId.replace(/-/g, ''), 'hex'));
}

async function keepChallenge(
  ctx: RequestContext,
  userId: string,
  purpose: 'register' | 'authenticate',
  challenge: string,
): Promise<void> {
  const now = ctx.clock.now();
  await ctx.sql.begin(async (tx) => {
    await store.pruneChallenges(tx, userId, purpose, LIVE_CHALLENGES, now);
    await store.insertChallenge(
      tx,
      { userId, purpose, challenge, expiresAt: new Date(now.getTime() + CHALLENGE_SECONDS * 1000) },
      now,
    );
  });
}

// --- registration -----------------------------------------------------------------------------------

async function verifyRegistration(
  ctx: RequestContext,
  userId: string,
  credential: unknown,
): Promise<store.NewPasskey> {
  const { rpId, origins } = ctx.config.webauthn;
  const response = asRegistrationResponse(credential);
  if (!response) {
    throw registrationRefused(
      "The credential is not a passkey registration: send the browser's credential.toJSON().",
    );
  }
  const client = clientData(response.response.clientDataJSON, 'webauthn.create');
  if (!client)
    throw registrationRefused(
      'The clientDataJSON is not that of a passkey registration in a top-level page.',
    );
  // The challenge the browser signed names the one ceremony this is; it is spent now, pass or fail.
  if (!(await store.takeChallenge(ctx.sql, userId, 'register', client.challenge, ctx.clock.now()))) {
    throw registrationRefused(
      'The challenge is unknown, expired (after 5 minutes) or already used: ask for new registration options.',
    );
  }
  if (!origins.includes(client.origin)) {
    throw registrationRefused(
      'The passkey was created on a page whose origin this platform does not accept.',
    );
  }
  const attestation = attestationOf(response.response.attestationObject);
  if (!attestation) throw registrationRefused('The attestationObject cannot be decoded.');
  if (!ACCEPTED_ATTESTATION.has(attestation.fmt)) {
    throw registrationRefused(
      'The attestation format is not accepted: ask the browser for "none" attestation ("packed" is accepted too).',
    );
  }
  if (!attestation.rpIdHash.equals(sha256(rpId))) {
    throw registrationRefused(`The passkey was created for another relying party than "${rpId}".`);
  }
  let verification: Awaited<ReturnType<typeof verifyRegistrationResponse>>;
  try {
    verification = await verifyRegistrationResponse({
      response,
      expectedChallenge: client.challenge,
      expectedOrigin: origins,
      expectedRPID: rpId,
      requireUserVerification: false,
      supportedAlgorithmIDs: ALGORITHMS,
    });
  } catch (err) {
    ctx.log.info(
      { request_id: ctx.requestId, user_id: userId, reason: (err as Error).message },
      'passkey registration refused',
    );
    throw registrationRefused(registrationReason(err));
  }
  if (!verification.verified) throw registrationRefused('The attestation signature does not verify.');
  const info = verification.registrationInfo;
  return {
    credentialId: info.credential.id,
    publicKey: Buffer.from(info.credential.publicKey),
    signCount: info.credential.counter,
    transports: [...new Set(response.response.transports ?? [])].filter((t) => TRANSPORTS.has(t)),
    deviceType: info.credentialDeviceType,
    backedUp: info.credentialBackedUp,
  };
}

function registrationReason(err: unknown): string {
  const message = err instanceof Error ? err.message : '';
  if (/public key alg/i.test(message)) {
    return 'The passkey uses a key algorithm this platform does not accept (EdDSA, ES256 or RS256).';
  }
  if (/user presence/i.test(message)) return "The authenticator did not confirm the user's presence.";
  return 'The registration response is malformed or its attestation statement does not verify.';
}

function attestationOf(attestationObject: string): { fmt: string; rpIdHash: Buffer } | null {
  try {
    const decoded = decodeAttestationObject(new Uint8Array(Buffer.from(attestationObject, 'base64url')));
    const fmt = decoded.get('fmt');
    const authData = decoded.get('authData');
    if (typeof fmt !== 'string' || !(authData instanceof Uint8Array)) return null;
    return { fmt, rpIdHash: Buffer.from(parseAuthenticatorData(authData).rpIdHash) };
  } catch {
    return null;
  }
}

// --- authentication ---------------------------------------------------------------------------------

/** Null when the assertion is good (and its counter stored); otherwise why not, for the log. */
async function assertionFailure(
  ctx: RequestContext,
  userId: string,
  credential: unknown,
): Promise<string | null> {
  const { rpId, origins } = ctx.config.webauthn;
  const now = ctx.clock.now();
  const response = asAuthenticationResponse(credential);
  if (!response) return 'not an authentication response';
  const client = clientData(response.response.clientDataJSON, 'webauthn.get');
  if (!client) return 'clientDataJSON unreadable, of another type or cross-origin';
  if (!(await store.takeChallenge(ctx.sql, userId, 'authenticate', client.challenge, now))) {
    return 'challenge unknown, expired, spent or of another user';
  }
  const passkey = await store.findPasskey(ctx.sql, userId, response.id);
  if (!passkey) return 'unknown credential';
  const handle = response.response.userHandle;
  if (handle && handle !== Buffer.from(userHandle(userId)).toString('base64url'))
    return 'user handle of another user';
  let verification: Awaited<ReturnType<typeof verifyAuthenticationResponse>>;
  try {
    verification = await verifyAuthenticationResponse({
      response,
      expectedChallenge: client.challenge,
      expectedOrigin: origins,
      expectedRPID: rpId,
      credential: {
        id: passkey.credential_id,
        publicKey: new Uint8Array(passkey.public_key),
        // simplewebauthn refuses a counter that does not move forward once either side is non-zero.
        counter: Number(passkey.sign_count),
        transports: passkey.transports,
      },
      requireUserVerification: false,
    });
  } catch (err) {
    return err instanceof Error ? err.message : 'verification failed';
  }
  if (!verification.verified) return 'bad signature';
  // Compare-and-set: of two assertions carrying one counter value, only one passes.
  const advanced = await store.advanceSignCount(
    ctx.sql,
    passkey.id,
    passkey.sign_count,
    verification.authenticationInfo.newCounter,
    now,
  );
  return advanced ? null : 'signature counter raced';
}

// --- parsing the browser's JSON ---------------------------------------------------------------------

const BASE64URL = /^[A-Za-z0-9_-]+={0,2}$/;
const isB64 = (v: unknown): v is string => typeof v === 'string' && v.length > 0 && BASE64URL.test(v);
const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

function credentialBase(value: unknown): Record<string, unknown> | null {
  if (!isRecord(value) || value.type !== 'public-key' || !isB64(value.id) || value.rawId !== value.id)
    return null;
  if (!isRecord(value.response) || !isB64(value.response.clientDataJSON)) return null;
  return value.response;
}

function asRegistrationResponse(value: unknown): RegistrationResponseJSON | null {
  const response = credentialBase(value);
  if (!response || !isB64(response.attestationObject)) return null;
  const transports = response.transports;
  if (
    transports !== undefined &&
    !(Array.isArray(transports) && transports.every((t) => typeof t === 'string'))
  )
    return null;
  return value as RegistrationResponseJSON;
}

function asAuthenticationResponse(value: unknown): AuthenticationResponseJSON | null {
  const response = credentialBase(value);
  if (!response || !isB64(response.authenticatorData) || !isB64(response.signature)) return null;
  const handle = response.userHandle;
  if (handle !== undefined && handle !== null && typeof handle !== 'string') return null;
  return value as AuthenticationResponseJSON;
}

/**
 * The parts of clientDataJSON the server reads before verifying: the challenge (which stored
 * challenge to take) and the origin. Null unless it is JSON of the expected ceremony type made in a
 * top-level page (a cross-origin iframe is refused: WebAuthn §13.4.2).
 */
function clientData(
  encoded: string,
  type: 'webauthn.create' | 'webauthn.get',
): { challenge: string; origin: string } | null {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(encoded, 'base64url').toString('utf8'));
  } catch {
    return null;
  }
  if (!isRecord(parsed) || parsed.type !== type || parsed.crossOrigin === true) return null;
  if (!isB64(parsed.challenge) || parsed.challenge.length > 512 || typeof parsed.origin !== 'string')
    return null;
  return { challenge: parsed.challenge, origin: parsed.origin };
}

const sha256 = (text: string) => createHash('sha256').update(text).digest();
