// Behaviour on a terminal: table by default, and no bytes dumped on it. Runs svcctl under
// script(1), which gives it a pseudo-terminal for stdout.
import { execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ExitCode } from '../../src/exit-codes.js';
import { CLI_BIN, ensureBuilt } from '../support/build.js';
import { tempHome } from '../support/run-cli.js';

const hasScript = (() => {
  try {
    execFileSync('script', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

let stub: Server;
let stubUrl: string;
const requests: string[] = [];

beforeAll(async () => {
  ensureBuilt();
  stub = createServer((req, res) => {
    requests.push(req.url ?? '');
    if (req.url?.includes('/public/assets/')) {
      res.writeHead(200, { 'content-type': 'image/png' });
      res.end(Buffer.from([0x89, 0x50, 0x4e, 0x47]));
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify([{ id: 'i1', title: 'Disk' }]));
  });
  stub.listen(0, '127.0.0.1');
  await once(stub, 'listening');
  stubUrl = `http://127.0.0.1:${(stub.address() as AddressInfo).port}`;
}, 180_000);
afterAll(async () => {
  if (stub) await new Promise((r) => stub.close(r));
});

/** Runs svcctl with a terminal as stdout; the terminal's output (stdout and stderr), newlines normalised. */
async function onTerminal(args: string[]): Promise<{ code: number | null; output: string }> {
  const command = [process.execPath, CLI_BIN, ...args].map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(' ');
  const child = spawn('script', ['-qec', command, '/dev/null'], {
    env: { PATH: process.env.PATH ?? '', ...tempHome(), SVCCTL_BASE_URL: stubUrl, TERM: 'dumb' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const out: Buffer[] = [];
  child.stdout.on('data', (c: Buffer) => out.push(c));
  const [code] = (await once(child, 'close')) as [number | null];
  return { code, output: Buffer.concat(out).toString('utf8').replace(/\r\n/g, '\n') };
}

it.skipIf(!hasScript)('prints a table by default', async () => {
  const r = await onTerminal(['public', 'incidents', 'list']);
  expect(r.code).toBe(0);
  expect(r.output).toBe('ID  TITLE\ni1  Disk\n');
});

it.skipIf(!hasScript)('refuses to print binary answers, before sending the request', async () => {
  const before = requests.length;
  const r = await onTerminal(['public', 'assets', 'get', '2f1c7a8e-5b6d-4c3e-9f0a-1b2c3d4e5f60']);
  expect(r.code).toBe(ExitCode.usage);
  expect(r.output).toContain('the answer is binary (image/*); give --output FILE, or redirect stdout');
  expect(requests.length).toBe(before);
});
