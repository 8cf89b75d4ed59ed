// The certificates the ingress serves by SNI (migration 0030 `tls_certificates`): one row per name (an
// exact host or a `*.zone` wildcard), its private key sealed (secret box, purpose 'tls-key'). Writing a
// row bumps `edge_state`, so the edge loads the new certificate at once.
import type { Db } from '../db/client.js';
import type { SecretBox } from '../secrets/secret-box.js';

export interface CertificateInput {
  hostname: string;
  /** The leaf first, then its chain (PEM). */
  certificatePem: string;
  privateKeyPem: string;
  issuer: 'acme' | 'local';
  notBefore: Date;
  notAfter: Date;
}

export interface StoredCertificate {
  hostname: string;
  certificatePem: string;
  privateKeySealed: string;
  issuer: 'acme' | 'local';
  notBefore: Date;
  notAfter: Date;
  updatedAt: Date;
}

/** Stores (or replaces) the certificate of `hostname`, sealing its key. */
export async function putCertificate(
  db: Db,
  box: SecretBox,
  input: CertificateInput,
  now: Date = new Date(),
): Promise<void> {
  const hostname = input.hostname.toLowerCase();
  const sealed = await box.seal('tls-key', input.privateKeyPem);
  await db`
    insert into tls_certificates (hostname, certificate_pem, private_key_sealed, issuer, not_before, not_after, updated_at)
    values (${hostname}, ${input.certificatePem}, ${sealed}, ${input.issuer}, ${input.notBefore}, ${input.notAfter}, ${now})
    on conflict (hostname) do update set certificate_pem = excluded.certificate_pem,
      private_key_sealed = excluded.private_key_sealed, issuer = excluded.issuer,
      not_before = excluded.not_before, not_after = excluded.not_after, updated_at = excluded.updated_at`;
}

export async function getCertificate(db: Db, hostname: string): Promise<StoredCertificate | null> {
  const [row] = await db<
    {
      hostname: string;
      certificate_pem: string;
      private_key_sealed: string;
      issuer: 'acme' | 'local';
      not_before: Date;
      not_after: Date;
      updated_at: Date;
    }[]
  >`select hostname, certificate_pem, private_key_sealed, issuer, not_before, not_after, updated_at
    from tls_certificates where hostname = ${hostname.toLowerCase()}`;
  return row
    ? {
        hostname: row.hostname,
        certificatePem: row.certificate_pem,
        privateKeySealed: row.private_key_sealed,
        issuer: row.issuer,
        notBefore: row.not_before,
        notAfter: row.not_after,
        updatedAt: row.updated_at,
      }
    : null;
}
