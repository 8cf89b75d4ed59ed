// Let's Encrypt's pebble (Debian's `pebble`), a real ACME server on loopback for tests: its own TLS
// certificate made with openssl for 127.0.0.1 (trusted by the app through ACME_CA_FILE), validation
// through the given DNS server (`-dnsserver`) and HTTP-01 on `httpPort` (the ingress's HTTP port).
// Authorizations are never reused, so each order is really validated.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort } from './app.js';

export interface TestPebble {
  directoryUrl: string;
  /** The PEM of pebble's own TLS certificate (for ACME_CA_FILE). */
  tlsCertificateFile: string;
  /** Starts pebble (after the ingress is up, so its HTTP port is known). */
  start(options: { dnsServer: string; httpPort: number }): Promise<void>;
  /** The root its certificates chain to, from the management API (`/roots/0`). */
  root(): Promise<string>;
  stop(): Promise<void>;
}

const run = promisify(execFile);

function fetchText(url: string, ca: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { ca, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

/** Prepares pebble's certificate and ports; `start` runs it. */
export async function preparePebble(): Promise<TestPebble> {
  const dir = await mkdtemp(join(tmpdir(), 'pebble-'));
  const cert = join(dir, 'cert.pem');
  const key = join(dir, 'key.pem');
  await run('openssl', [
    'req',
    '-x509',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:P-256',
    '-nodes',
    '-days',
    '2',
    '-subj',
    '/CN=pebble',
    '-addext',
    'subjectAltName=IP:127.0.0.1',
    '-keyout',
    key,
    '-out',
    cert,
  ]);
  const tls = await readFile(cert, 'utf8');
  const [port, managementPort, tlsPort] = [await freePort(), await freePort(), await freePort()];
  let child: ChildProcess | null = null;
  const managementUrl = `https://127.0.0.1:${managementPort}`;
  return {
    directoryUrl: `https://127.0.0.1:${port}/dir`,
    tlsCertificateFile: cert,
    async start({ dnsServer, httpPort }) {
      const config = join(dir, 'pebble.json');
      await writeFile(
        config,
        JSON.stringify({
          pebble: {
            listenAddress: `127.0.0.1:${port}`,
            managementListenAddress: `127.0.0.1:${managementPort}`,
            certificate: cert,
            privateKey: key,
            httpPort,
            tlsPort,
            ocspResponderURL: '',
            externalAccountBindingRequired: false,
          },
        }),
      );
      child = spawn('pebble', ['-config', config, '-dnsserver', dnsServer], {
        env: { ...process.env, PEBBLE_VA_NOSLEEP: '1', PEBBLE_WFE_NONCEREJECT: '0', PEBBLE_AUTHZREUSE: '0' },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let log = '';
      child.stdout!.on('data', (d: Buffer) => (log += d.toString()));
      child.stderr!.on('data', (d: Buffer) => (log += d.toString()));
      const deadline = Date.now() + 20_000;
      for (;;) {
        try {
          if ((await fetchText(`https://127.0.0.1:${port}/dir`, tls)).status === 200) return;
        } catch {
          // not listening yet
        }
        if (child.exitCode !== null || Date.now() > deadline)
          throw new Error(`pebble did not start:\n${log}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    },
    async root() {
      const answer = await fetchText(`${managementUrl}/roots/0`, tls);
      if (answer.status !== 200) throw new Error(`pebble's root: HTTP ${answer.status}`);
      return answer.body;
    },
    async stop() {
      if (child && child.exitCode === null) {
        const exited = new Promise((r) => child!.once('exit', r));
        child.kill('SIGTERM');
        await exited;
      }
      await rm(dir, { recursive: true, force: true });
    },
  };
}
