// The local CA (DATA_DIR/local-ca.pem) and the certificates it issues, checked with Node's own X.509
// and TLS code, and the stored certificate's sealed key (putCertificate).
import { X509Certificate, createPrivateKey } from 'node:crypto';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import tls from 'node:tls';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  issueLocalCertificate,
  localCaCertificatePem,
  LOCAL_CA_FILE,
} from '../../server/src/certificates/local-ca.js';
import {
  ensurePlatformCertificate,
  platformWildcard,
} from '../../server/src/certificates/platform-wildcard.js';
import { getCertificate, putCertificate } from '../../server/src/certificates/store.js';
import { connect, type Sql } from '../../server/src/db/client.js';
import { createTestDatabase, testBox } from '../support/app.js';

let dataDir: string;
let db: Awaited<ReturnType<typeof createTestDatabase>>;
let sql: Sql;
const config = () => ({ dataDir, platformName: 'Test Platform', platformDomain: 'example.test' });

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'local-ca-'));
  db = await createTestDatabase();
  sql = connect(db.url, { max: 2 });
});
afterAll(async () => {
  await sql?.end({ timeout: 5 });
  await db?.drop();
  await rm(dataDir, { recursive: true, force: true });
});

const certificatesOf = (pem: string) =>
  pem
    .match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g)!
    .map((c) => new X509Certificate(c));

describe('local CA', () => {
  it('is made once, kept readable by its owner only, and signs leaves a TLS client given it accepts', async () => {
    // X.509 times are whole seconds.
    const now = new Date(Math.floor(Date.now() / 1000) * 1000);
    const issued = await issueLocalCertificate(config(), ['*.apps.example.test', 'web.example.test'], now);
    const file = join(dataDir, LOCAL_CA_FILE);
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    const caPem = await localCaCertificatePem(config());
    expect(await readFile(file, 'utf8')).toContain(caPem.trim());

    const [leaf, chainCa, extra] = certificatesOf(issued.certificatePem);
    const ca = new X509Certificate(caPem);
    expect(extra).toBeUndefined();
    expect(chainCa!.fingerprint256).toBe(ca.fingerprint256);
    expect(ca.ca).toBe(true);
    expect(leaf!.ca).toBe(false);
    expect(leaf!.checkIssued(ca)).toBe(true);
    expect(leaf!.verify(ca.publicKey)).toBe(true);
    expect(leaf!.checkHost('abc-12345678.apps.example.test')).toBe('*.apps.example.test');
    expect(leaf!.checkHost('web.example.test')).toBe('web.example.test');
    expect(leaf!.checkHost('a.b.apps.example.test')).toBeUndefined();
    expect(leaf!.checkPrivateKey(createPrivateKey(issued.privateKeyPem))).toBe(true);
    expect(issued.notBefore.getTime()).toBeLessThan(now.getTime());
    expect(issued.notAfter.getTime() - now.getTime()).toBe(90 * 24 * 3600 * 1000);

    // A real handshake: a client trusting only the CA accepts the name and refuses another.
    const server = tls.createServer({ cert: issued.certificatePem, key: issued.privateKeyPem }, (s) =>
      s.end('ok'),
    );
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const { port } = server.address() as AddressInfo;
    const handshake = (servername: string) =>
      new Promise<string>((resolve, reject) => {
        const socket = tls.connect({ host: '127.0.0.1', port, servername, ca: caPem }, () => {
          socket.once('data', (d) => resolve(d.toString()));
        });
        socket.once('error', reject);
      });
    try {
      expect(await handshake('shop-0a1b2c3d.apps.example.test')).toBe('ok');
      await expect(handshake('other.example.test')).rejects.toThrow(/altnames|Hostname/);
    } finally {
      server.close();
    }
  });

  it('keeps one CA when several processes make it at once', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'local-ca-race-'));
    try {
      const pems = await Promise.all(
        [1, 2, 3, 4].map(async (i) => {
          // Each "process" has its own cache: a different but equivalent path string.
          const { localCaCertificatePem: read } = await import('../../server/src/certificates/local-ca.js');
          return read({ dataDir: `${dir}${'/.'.repeat(i)}`, platformName: 'P' });
        }),
      );
      expect(new Set(pems).size).toBe(1);
      expect(pems[0]).toBe(
        await readFile(join(dir, LOCAL_CA_FILE), 'utf8').then((t) =>
          t.slice(t.indexOf('-----BEGIN CERTIFICATE')),
        ),
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('stored certificates', () => {
  it('seals the key, replaces by name, and bumps the edge state', async () => {
    const issued = await issueLocalCertificate(config(), ['shop.example.com']);
    const [{ generation: before }] = await sql<[{ generation: string }]>`select generation from edge_state`;
    await putCertificate(sql, testBox, { hostname: 'Shop.example.com', issuer: 'acme', ...issued });
    const stored = await getCertificate(sql, 'shop.example.com');
    expect(stored?.issuer).toBe('acme');
    expect(stored?.certificatePem).toBe(issued.certificatePem);
    expect(stored?.privateKeySealed).not.toContain('PRIVATE KEY');
    expect(await testBox.openText('tls-key', stored!.privateKeySealed)).toBe(issued.privateKeyPem);
    const [{ generation: after }] = await sql<[{ generation: string }]>`select generation from edge_state`;
    expect(Number(after)).toBeGreaterThan(Number(before));

    const again = await issueLocalCertificate(config(), ['shop.example.com']);
    await putCertificate(sql, testBox, { hostname: 'shop.example.com', issuer: 'local', ...again });
    const rows =
      await sql`select issuer, certificate_pem from tls_certificates where hostname = 'shop.example.com'`;
    expect(rows).toEqual([{ issuer: 'local', certificate_pem: again.certificatePem }]);
  });

  it('issues the platform wildcard when missing or due, and not otherwise', async () => {
    const now = new Date();
    const name = platformWildcard('example.test');
    expect(await ensurePlatformCertificate(sql, testBox, config(), now)).toBe(true);
    const first = await getCertificate(sql, name);
    expect(first?.issuer).toBe('local');
    expect(certificatesOf(first!.certificatePem)[0]!.checkHost('x-1.apps.example.test')).toBe(
      '*.apps.example.test',
    );
    expect(
      await ensurePlatformCertificate(
        sql,
        testBox,
        config(),
        new Date(now.getTime() + 59 * 24 * 3600 * 1000),
      ),
    ).toBe(false);
    expect((await getCertificate(sql, name))?.certificatePem).toBe(first!.certificatePem);
    // Thirty days before it ends it is due.
    const due = new Date(now.getTime() + 61 * 24 * 3600 * 1000);
    expect(await ensurePlatformCertificate(sql, testBox, config(), due)).toBe(true);
    const renewed = await getCertificate(sql, name);
    expect(renewed!.notAfter.getTime()).toBeGreaterThan(first!.notAfter.getTime());
  });
});
