// Certificates from an ACME CA (RFC 8555) at ACME_DIRECTORY_URL, with acme-client: the account key is
// made once per directory and kept sealed in `acme_accounts`; http-01 challenges are rows of
// `acme_challenges`, which the edge's HTTP ingress answers at /.well-known/acme-challenge/{token}.
import { readFileSync } from 'node:fs';
import { Agent } from 'node:https';
import * as acme from 'acme-client';
import type { Config } from '../config.js';
import type { Sql } from '../db/client.js';
import type { SecretBox } from '../secrets/secret-box.js';
import type { IssuedCertificate } from './local-ca.js';
import * as store from './issuance-store.js';

/** A refusal of the CA that asking again cannot change (RFC 8555 §6.7 error types). */
export class PermanentAcmeError extends Error {}

const PERMANENT_TYPES = ['rejectedIdentifier', 'unsupportedIdentifier', 'caa', 'malformed', 'badCSR'];
const isPermanent = (message: string) =>
  PERMANENT_TYPES.some((type) => message.includes(`urn:ietf:params:acme:error:${type}`));

let trustedFor: string | null = null;
/** ACME_CA_FILE: the directory's TLS is checked against these CAs too (a private ACME CA). */
function trustDirectoryCa(config: Pick<Config, 'acmeCaFile'>): void {
  if (config.acmeCaFile === null || trustedFor === config.acmeCaFile) return;
  acme.axios.defaults.httpsAgent = new Agent({ ca: readFileSync(config.acmeCaFile), keepAlive: true });
  trustedFor = config.acmeCaFile;
}

async function clientFor(sql: Sql, box: SecretBox, directoryUrl: string, now: Date): Promise<acme.Client> {
  let account = await store.findAcmeAccount(sql, directoryUrl);
  if (!account) {
    const key = await acme.crypto.createPrivateEcdsaKey('P-256');
    account = await store.insertAcmeAccount(
      sql,
      { directoryUrl, accountKeySealed: await box.seal('acme-account-key', key) },
      now,
    );
  }
  const accountKey = await box.open('acme-account-key', account.account_key_sealed);
  const client = new acme.Client({
    directoryUrl,
    accountKey,
    accountUrl: account.account_url ?? undefined,
    backoffAttempts: 8,
    backoffMin: 250,
    backoffMax: 5000,
  });
  if (account.account_url === null) {
    await client.createAccount({ termsOfServiceAgreed: true });
    await store.setAcmeAccountUrl(sql, directoryUrl, client.getAccountUrl());
  }
  return client;
}

/**
 * The CAA issuer domains (RFC 8659) that mean our CA: ACME_CAA_IDENTITIES when set, else the directory's
 * `meta.caaIdentities` (RFC 8555 §7.1.1); empty when the CA names none (then CAA cannot be checked).
 */
export async function acmeCaaIdentities(config: Config): Promise<string[]> {
  if (config.acmeCaaIdentities !== null) return config.acmeCaaIdentities;
  if (config.acmeDirectoryUrl === null) return [];
  trustDirectoryCa(config);
  const { data } = await acme.axios.get<{ meta?: { caaIdentities?: unknown } }>(config.acmeDirectoryUrl);
  const ids = data.meta?.caaIdentities;
  return Array.isArray(ids)
    ? ids.filter((i): i is string => typeof i === 'string').map((i) => i.toLowerCase())
    : [];
}

/** Orders and fetches a certificate for `hostname` over http-01; a refusal for good is a PermanentAcmeError. */
export async function issueAcmeCertificate(
  deps: { sql: Sql; box: SecretBox; config: Config; now: () => Date },
  hostname: string,
): Promise<IssuedCertificate> {
  const directoryUrl = deps.config.acmeDirectoryUrl!;
  trustDirectoryCa(deps.config);
  const tokens: string[] = [];
  try {
    const client = await clientFor(deps.sql, deps.box, directoryUrl, deps.now());
    const [key, csr] = await acme.crypto.createCsr(
      { commonName: hostname, altNames: [hostname] },
      await acme.crypto.createPrivateEcdsaKey('P-256'),
    );
    const certificatePem = await client.auto({
      csr,
      termsOfServiceAgreed: true,
      challengePriority: ['http-01'],
      // acme-client's own pre-check asks the system's resolver; our preflight asked DNS_SERVERS already.
      skipChallengeVerification: true,
      challengeCreateFn: async (_authz, challenge, keyAuthorization) => {
        tokens.push(challenge.token);
        await store.putChallenge(
          deps.sql,
          { token: challenge.token, hostname, keyAuthorization },
          deps.now(),
        );
      },
      challengeRemoveFn: async (_authz, challenge) => {
        await store.deleteChallenge(deps.sql, challenge.token);
      },
    });
    const info = acme.crypto.readCertificateInfo(certificatePem);
    return {
      certificatePem,
      privateKeyPem: key.toString(),
      notBefore: info.notBefore,
      notAfter: info.notAfter,
    };
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    if (isPermanent(message)) throw new PermanentAcmeError(message);
    throw error;
  } finally {
    for (const token of tokens) await store.deleteChallenge(deps.sql, token);
  }
}
