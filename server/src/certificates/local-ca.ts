// The platform's local certificate authority (DECISIONS.md §6 "DNS and domains"): it signs the
// certificates of names no public CA is asked for, the wildcard `*.apps.{PLATFORM_DOMAIN}` of web
// services' platform hosts above all. Its key and self-signed certificate are made once and kept in
// DATA_DIR/local-ca.pem (mode 0600, the key then the certificate); a TLS client trusts the platform's
// hosts by trusting that certificate (`npm run admin -- local-ca` prints it).
//
// ECDSA P-256 keys: quick to make (a certificate is issued while the edge starts) and accepted by every
// current TLS client.
// @peculiar/x509's dependency injection needs the Reflect metadata polyfill loaded before it.
import 'reflect-metadata';
import { randomBytes, webcrypto } from 'node:crypto';
import { link, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import * as x509 from '@peculiar/x509';
import type { Config } from '../config.js';

x509.cryptoProvider.set(webcrypto as unknown as Crypto);

export const LOCAL_CA_FILE = 'local-ca.pem';

const ALGORITHM = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;
const DAY_MS = 24 * 3600 * 1000;
/** The CA lives long: replacing it means every client trusting it must be given the new one. */
const CA_DAYS = 3650;
/** A leaf lives as long as a public CA's would; renewal (issuance when due) keeps it fresh. */
export const LOCAL_LEAF_DAYS = 90;
/** Clocks of clients and of the platform disagree a little: a certificate is valid from a while ago. */
const BACKDATE_MS = 3600 * 1000;

export interface LocalCa {
  certificatePem: string;
  certificate: x509.X509Certificate;
  privateKey: CryptoKey;
}

export interface IssuedCertificate {
  /** The leaf, then the CA's certificate (PEM). */
  certificatePem: string;
  /** PKCS#8 PEM. */
  privateKeyPem: string;
  notBefore: Date;
  notAfter: Date;
}

const caCache = new Map<string, Promise<LocalCa>>();

/** The CA of DATA_DIR, made on first use; the same answer for the life of the process. */
export function localCa(config: Pick<Config, 'dataDir' | 'platformName'>): Promise<LocalCa> {
  const file = join(config.dataDir, LOCAL_CA_FILE);
  let ca = caCache.get(file);
  if (!ca) {
    ca = readOrCreate(file, config.platformName).catch((err: unknown) => {
      caCache.delete(file);
      throw err;
    });
    caCache.set(file, ca);
  }
  return ca;
}

/** The CA certificate a TLS client is given to trust the platform's hosts (PEM). */
export async function localCaCertificatePem(
  config: Pick<Config, 'dataDir' | 'platformName'>,
): Promise<string> {
  return (await localCa(config)).certificatePem;
}

/**
 * A certificate for `hostnames` (DNS names; `*.zone` wildcards allowed) signed by the local CA, valid
 * from an hour before `now` for LOCAL_LEAF_DAYS.
 */
export async function issueLocalCertificate(
  config: Pick<Config, 'dataDir' | 'platformName'>,
  hostnames: string[],
  now: Date = new Date(),
): Promise<IssuedCertificate> {
  if (hostnames.length === 0) throw new RangeError('a certificate names at least one host');
  const ca = await localCa(config);
  const keys = (await webcrypto.subtle.generateKey(ALGORITHM, true, ['sign', 'verify'])) as CryptoKeyPair;
  const notBefore = new Date(now.getTime() - BACKDATE_MS);
  const notAfter = new Date(now.getTime() + LOCAL_LEAF_DAYS * DAY_MS);
  const leaf = await x509.X509CertificateGenerator.create({
    serialNumber: serialNumber(),
    subject: `CN=${hostnames[0]}`,
    issuer: ca.certificate.subject,
    notBefore,
    notAfter,
    signingAlgorithm: ALGORITHM,
    publicKey: keys.publicKey,
    signingKey: ca.privateKey,
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
      new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth]),
      new x509.SubjectAlternativeNameExtension(hostnames.map((value) => ({ type: 'dns' as const, value }))),
      await x509.AuthorityKeyIdentifierExtension.create(ca.certificate),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
    ],
  });
  return {
    certificatePem: `${leaf.toString('pem')}\n${ca.certificatePem}`,
    privateKeyPem: await privateKeyPem(keys.privateKey),
    notBefore: leaf.notBefore,
    notAfter: leaf.notAfter,
  };
}

/**
 * Race-free across the processes of one DATA_DIR starting together (the API, the edge): each writes a
 * candidate to a private temp file and hard-links it into place; link() fails when the name exists,
 * and then everyone reads the winner.
 */
async function readOrCreate(file: string, platformName: string): Promise<LocalCa> {
  try {
    return await parse(await readFile(file, 'utf8'), file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  await mkdir(join(file, '..'), { recursive: true });
  const candidate = `${file}.${process.pid}.${randomBytes(6).toString('hex')}`;
  await writeFile(candidate, await createCa(platformName), { mode: 0o600, flag: 'wx' });
  try {
    await link(candidate, file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  } finally {
    await rm(candidate, { force: true });
  }
  return parse(await readFile(file, 'utf8'), file);
}

async function createCa(platformName: string): Promise<string> {
  const keys = (await webcrypto.subtle.generateKey(ALGORITHM, true, ['sign', 'verify'])) as CryptoKeyPair;
  const now = Date.now();
  // The random part tells two platforms' CAs apart in a client's trust store.
  const name = `${platformName} local CA ${randomBytes(4).toString('hex')}`.replace(/[,+="\\<>;#]/g, ' ');
  const certificate = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: serialNumber(),
    name: `CN=${name}`,
    notBefore: new Date(now - BACKDATE_MS),
    notAfter: new Date(now + CA_DAYS * DAY_MS),
    signingAlgorithm: ALGORITHM,
    keys,
    extensions: [
      new x509.BasicConstraintsExtension(true, 0, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
    ],
  });
  return `${await privateKeyPem(keys.privateKey)}\n${certificate.toString('pem')}\n`;
}

async function parse(text: string, file: string): Promise<LocalCa> {
  const key = /-----BEGIN PRIVATE KEY-----[\s\S]+?-----END PRIVATE KEY-----/.exec(text)?.[0];
  const cert = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/.exec(text)?.[0];
  if (!key || !cert) throw new Error(`${file} must hold the local CA's private key and certificate (PEM)`);
  const certificate = new x509.X509Certificate(cert);
  const privateKey = await webcrypto.subtle.importKey(
    'pkcs8',
    x509.PemConverter.decodeFirst(key),
    ALGORITHM,
    false,
    ['sign'],
  );
  return {
    certificatePem: `${certificate.toString('pem')}\n`,
    certificate,
    privateKey: privateKey as CryptoKey,
  };
}

async function privateKeyPem(key: CryptoKey): Promise<string> {
  return x509.PemConverter.encode(await webcrypto.subtle.exportKey('pkcs8', key), 'PRIVATE KEY');
}

/** 16 random bytes, positive as DER requires. */
function serialNumber(): string {
  const bytes = randomBytes(16);
  bytes[0] = bytes[0]! & 0x7f;
  return bytes.toString('hex');
}
