// A software WebAuthn authenticator on node:crypto: ES256 (P-256) credentials, attestation objects in
// hand-written CBOR with "none" or "packed" self attestation, and assertions with a signature
// counter, each answered as the browser's PublicKeyCredential.toJSON() would (WebAuthn Level 3 §5.1,
// §6.1 authenticator data, §6.5 attestation, §8.2 packed, §8.7 none). Overrides let a test make the
// mistakes a relying party must refuse: wrong origin, wrong rpId, another challenge, an old counter.
import { createHash, generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto';

type Cbor = number | string | Uint8Array | Cbor[] | Map<Cbor, Cbor>;

/** Canonical-enough CBOR (RFC 8949): integers, byte and text strings, arrays, maps. */
export function encodeCbor(value: Cbor): Buffer {
  const head = (major: number, n: number): Buffer => {
    if (n < 24) return Buffer.from([(major << 5) | n]);
    if (n < 0x100) return Buffer.from([(major << 5) | 24, n]);
    if (n < 0x10000) return Buffer.from([(major << 5) | 25, n >> 8, n & 0xff]);
    const b = Buffer.alloc(5);
    b[0] = (major << 5) | 26;
    b.writeUInt32BE(n, 1);
    return b;
  };
  if (typeof value === 'number') {
    if (!Number.isInteger(value)) throw new Error('only integers');
    return value >= 0 ? head(0, value) : head(1, -1 - value);
  }
  if (typeof value === 'string') {
    const bytes = Buffer.from(value, 'utf8');
    return Buffer.concat([head(3, bytes.length), bytes]);
  }
  if (value instanceof Uint8Array) return Buffer.concat([head(2, value.length), value]);
  if (Array.isArray(value)) return Buffer.concat([head(4, value.length), ...value.map(encodeCbor)]);
  const parts: Buffer[] = [head(5, value.size)];
  for (const [k, v] of value) parts.push(encodeCbor(k), encodeCbor(v));
  return Buffer.concat(parts);
}

const b64u = (bytes: Uint8Array | string) => Buffer.from(bytes).toString('base64url');
const sha256 = (data: Uint8Array | string) => createHash('sha256').update(data).digest();

const FLAG_UP = 0x01;
const FLAG_UV = 0x04;
const FLAG_AT = 0x40;

export interface SoftCredential {
  id: Buffer;
  rpId: string;
  userHandle: string;
  privateKey: KeyObject;
  /** The COSE_Key of the public key (kty EC2, alg ES256, crv P-256). */
  cosePublicKey: Buffer;
  spki: Buffer;
  counter: number;
}

export interface CeremonyOverrides {
  /** The origin the "browser" puts in clientDataJSON. */
  origin: string;
  /** The rpId whose hash goes in authenticator data (default: the options' rp id). */
  rpId?: string;
  /** The challenge signed (default: the options' challenge). */
  challenge?: string;
}

export type RegistrationJSON = {
  id: string;
  rawId: string;
  type: 'public-key';
  authenticatorAttachment: 'platform';
  clientExtensionResults: Record<string, never>;
  response: {
    clientDataJSON: string;
    attestationObject: string;
    authenticatorData: string;
    transports: string[];
    publicKeyAlgorithm: number;
    publicKey: string;
  };
};

export type AssertionJSON = {
  id: string;
  rawId: string;
  type: 'public-key';
  authenticatorAttachment: 'platform';
  clientExtensionResults: Record<string, never>;
  response: { clientDataJSON: string; authenticatorData: string; signature: string; userHandle: string };
};

interface CreationOptions {
  challenge: string;
  rp?: { id?: string };
  user?: { id?: string };
}
interface RequestOptions {
  challenge: string;
  rpId?: string;
  allowCredentials?: { id: string }[];
}

export class SoftAuthenticator {
  readonly credentials: SoftCredential[] = [];
  /** AAGUID of the attested credential data (all zero, as an anonymised authenticator gives). */
  aaguid = Buffer.alloc(16);
  /** Whether the authenticator claims user verification (UV flag). */
  userVerified = true;

  /** navigator.credentials.create(): makes a credential and answers its registration JSON. */
  create(
    options: CreationOptions,
    overrides: CeremonyOverrides & { attestation?: 'none' | 'packed' },
  ): { json: RegistrationJSON; credential: SoftCredential } {
    const rpId = overrides.rpId ?? options.rp?.id;
    if (!rpId) throw new Error('no rp id');
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const jwk = publicKey.export({ format: 'jwk' });
    const cosePublicKey = encodeCbor(
      new Map<Cbor, Cbor>([
        [1, 2], // kty: EC2
        [3, -7], // alg: ES256
        [-1, 1], // crv: P-256
        [-2, Buffer.from(jwk.x!, 'base64url')],
        [-3, Buffer.from(jwk.y!, 'base64url')],
      ]),
    );
    const credential: SoftCredential = {
      id: randomBytes(32),
      rpId,
      userHandle: options.user?.id ?? '',
      privateKey,
      cosePublicKey,
      spki: publicKey.export({ format: 'der', type: 'spki' }),
      counter: 0,
    };
    const idLength = Buffer.alloc(2);
    idLength.writeUInt16BE(credential.id.length);
    const authData = Buffer.concat([
      this.authDataHead(rpId, FLAG_UP | (this.userVerified ? FLAG_UV : 0) | FLAG_AT, 0),
      this.aaguid,
      idLength,
      credential.id,
      cosePublicKey,
    ]);
    const clientDataJSON = this.clientData(
      'webauthn.create',
      overrides.challenge ?? options.challenge,
      overrides.origin,
    );
    const attestation = overrides.attestation ?? 'none';
    const attStmt =
      attestation === 'none'
        ? new Map<Cbor, Cbor>()
        : new Map<Cbor, Cbor>([
            ['alg', -7],
            // Self attestation: the credential's own key signs authData || hash(clientDataJSON).
            ['sig', sign('sha256', Buffer.concat([authData, sha256(clientDataJSON)]), privateKey)],
          ]);
    const attestationObject = encodeCbor(
      new Map<Cbor, Cbor>([
        ['fmt', attestation],
        ['attStmt', attStmt],
        ['authData', authData],
      ]),
    );
    this.credentials.push(credential);
    return {
      credential,
      json: {
        id: b64u(credential.id),
        rawId: b64u(credential.id),
        type: 'public-key',
        authenticatorAttachment: 'platform',
        clientExtensionResults: {},
        response: {
          clientDataJSON: b64u(clientDataJSON),
          attestationObject: b64u(attestationObject),
          authenticatorData: b64u(authData),
          transports: ['internal'],
          publicKeyAlgorithm: -7,
          publicKey: b64u(credential.spki),
        },
      },
    };
  }

  /**
   * navigator.credentials.get(): signs with the first allowed credential it holds (or `credential`),
   * counting up its signature counter unless `counter` says what to report.
   */
  get(
    options: RequestOptions,
    overrides: CeremonyOverrides & { credential?: SoftCredential; counter?: number },
  ): AssertionJSON {
    const allowed = new Set((options.allowCredentials ?? []).map((c) => c.id));
    const credential = overrides.credential ?? this.credentials.find((c) => allowed.has(b64u(c.id)));
    if (!credential) throw new Error('no allowed credential on this authenticator');
    credential.counter = overrides.counter ?? credential.counter + 1;
    const rpId = overrides.rpId ?? options.rpId ?? credential.rpId;
    const authData = this.authDataHead(rpId, FLAG_UP | (this.userVerified ? FLAG_UV : 0), credential.counter);
    const clientDataJSON = this.clientData(
      'webauthn.get',
      overrides.challenge ?? options.challenge,
      overrides.origin,
    );
    const signature = sign(
      'sha256',
      Buffer.concat([authData, sha256(clientDataJSON)]),
      credential.privateKey,
    );
    return {
      id: b64u(credential.id),
      rawId: b64u(credential.id),
      type: 'public-key',
      authenticatorAttachment: 'platform',
      clientExtensionResults: {},
      response: {
        clientDataJSON: b64u(clientDataJSON),
        authenticatorData: b64u(authData),
        signature: b64u(signature),
        userHandle: credential.userHandle,
      },
    };
  }

  private authDataHead(rpId: string, flags: number, counter: number): Buffer {
    const count = Buffer.alloc(4);
    count.writeUInt32BE(counter);
    return Buffer.concat([sha256(rpId), Buffer.from([flags]), count]);
  }

  private clientData(type: string, challenge: string, origin: string): Buffer {
    // Key order as browsers write it (§5.8.1.1): type, challenge, origin, crossOrigin.
    return Buffer.from(JSON.stringify({ type, challenge, origin, crossOrigin: false }), 'utf8');
  }
}
