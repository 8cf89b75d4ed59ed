// The built-in text screen (DECISIONS.md §6 "Screen": "otherwise a built-in RFB server that draws the
// machine's text console"), run with Xvnc hidden from PATH, as on a host without Debian's
// tigervnc-standalone-server: the capability says `text`, the machine's agent serves RFB 3.8 through the
// gateway as noVNC speaks it, the Raw framebuffer's glyph cells read back as the machine's console text,
// the holder's keys reach the console's prompt and a watcher's are dropped; and noVNC itself, in a real
// Chromium, connects, draws the console and types on it.
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import { dirname, join, normalize } from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type WebSocket from 'ws';
import { openScreenSocket } from '@svcplatform/sdk';
import { staffMember } from '../admin-content/staff.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { findChromium } from '../support/browser.js';
import { signedIn, type Caller } from '../support/organizations.js';
import { provisionService, type Provisioned } from '../support/services.js';
import { startTestSmtp, type TestSmtp } from '../support/smtp.js';
import { FONT, GLYPHS } from '../../server/src/agent/text-font.js';
import { localCapabilities } from '../../server/src/substrate/local/capabilities.js';
import { findProgram } from '../../server/src/substrate/local/programs.js';
import { waitUntil } from '../../server/src/substrate/local/proc.js';
import { pathWithout } from './hidden-programs.js';
import { ENCODING_RAW, RfbClient, type Rect } from './rfb.js';
import { readText } from './text-cells.js';

const COLUMNS = 80;
const ROWS = 30;
const KEY_RETURN = 0xff0d;
const KEY_BACKSPACE = 0xff08;

let app: TestApp;
let smtp: TestSmtp;
let owner: Caller;
let member: Caller;
let vps: Provisioned;
const sockets: WebSocket[] = [];
let pages: Server;
let origin: string;

/** noVNC's own files (its ES modules, as a page loads them) and a page that connects with its RFB class. */
const NOVNC = dirname(dirname(createRequire(import.meta.url).resolve('@novnc/novnc')));
const PAGE = `<!doctype html><div id="screen"></div><script type="module">
import RFB from '/novnc/core/rfb.js';
window.openScreen = (url, protocols) => new Promise((resolve, reject) => {
  const rfb = new RFB(document.getElementById('screen'), url, { wsProtocols: protocols, shared: true });
  rfb.addEventListener('connect', () => resolve(true));
  rfb.addEventListener('disconnect', (e) => reject(new Error('disconnected: ' + JSON.stringify(e.detail))));
  window.rfb = rfb;
});
/** Pixels of the console's foreground grey on noVNC's canvas. */
window.litPixels = () => {
  const canvas = document.querySelector('#screen canvas');
  const data = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height).data;
  let lit = 0;
  for (let i = 0; i < data.length; i += 4) if (data[i] === 0xc0 && data[i + 1] === 0xc0 && data[i + 2] === 0xc0) lit += 1;
  return { lit, width: canvas.width, height: canvas.height };
};
</script>`;

async function startPages(): Promise<Server> {
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://page');
    if (url.pathname === '/') return void res.writeHead(200, { 'content-type': 'text/html' }).end(PAGE);
    const file = normalize(join(NOVNC, url.pathname.replace(/^\/novnc\//, '')));
    if (!url.pathname.startsWith('/novnc/') || !file.startsWith(`${NOVNC}/`) || !file.endsWith('.js'))
      return void res.writeHead(404).end();
    readFile(file).then(
      (body) => res.writeHead(200, { 'content-type': 'text/javascript' }).end(body),
      () => res.writeHead(404).end(),
    );
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return server;
}

// Test files share their worker (isolate: false): the PATH is put back after this file.
const PATH = process.env.PATH;

beforeAll(async () => {
  // Before the app starts: its capabilities and the agents it spawns see this PATH.
  process.env.PATH = await pathWithout(['Xvnc']);
  smtp = await startTestSmtp();
  pages = await startPages();
  origin = `http://127.0.0.1:${(pages.address() as AddressInfo).port}`;
  // The page's origin is one the gateway accepts a browser's WebSocket from.
  app = await startTestApp({
    env: { SMTP_URL: smtp.url, SOURCE_RATE_LIMIT_SCALE: '1000', ALLOWED_ORIGINS: origin },
    gateway: true,
  });
  const staff = await staffMember(app, smtp, 'txt-staff', ['manage_services']);
  [owner, member] = await Promise.all([signedIn(app, smtp, 'txt-owner'), signedIn(app, smtp, 'txt-member')]);
  const orgId = (
    await owner.api.organizationCreate({ body: { name: 'Text', slug: `text-${Date.now().toString(36)}` } })
  ).id;
  await owner.api.memberAdd({ path: { id: orgId }, body: { user_id: member.userId, role: 'member' } });
  const projectId = (
    await owner.api.projectCreate({ path: { id: orgId }, body: { name: 'Main', slug: 'main' } })
  ).id;
  vps = await provisionService(staff.elevated, { projectId, name: 'Machine' });
  const endpoint = join(app.substrateDir, 'units', vps.primaryResourceId, 'screen.json');
  expect(await waitUntil(() => existsSync(endpoint), 30_000)).toBe(true);
}, 120_000);
afterAll(async () => {
  process.env.PATH = PATH;
  for (const ws of sockets) ws.terminate();
  await app?.close();
  await smtp?.close();
  pages?.closeAllConnections();
  pages?.close();
});

const path = () => ({ id: vps.serviceInstanceId, resource_id: vps.primaryResourceId });

async function openScreen(caller: Caller, force = true): Promise<RfbClient> {
  const ws = await openScreenSocket(await caller.api.screenTicketCreate({ path: path(), query: { force } }));
  sockets.push(ws);
  return new RfbClient(ws);
}

async function fullScreen(rfb: RfbClient): Promise<Rect> {
  rfb.requestUpdate(false, 0, 0, COLUMNS * FONT.width, ROWS * FONT.height);
  const [rect] = await rfb.readUpdate();
  return rect!;
}

function type(rfb: RfbClient, text: string): void {
  for (const char of text) rfb.key(char.charCodeAt(0));
}

describe('a machine screen without Xvnc', () => {
  it('is the text framebuffer: RFB 3.8, security None, 640x390 at 32 bits', async () => {
    expect(findProgram('Xvnc')).toBeNull();
    expect(localCapabilities().framebuffer).toBe('text');
    const rfb = await openScreen(owner);
    const init = await rfb.handshake(false);
    expect(init).toEqual({
      version: 'RFB 003.008\n',
      securityTypes: [1],
      securityResult: 0,
      width: COLUMNS * FONT.width,
      height: ROWS * FONT.height,
      bitsPerPixel: 32,
      name: `machine ${vps.primaryResourceId}`,
    });
    rfb.ws.close();
  });

  it("draws the machine's console: the glyph cells of a Raw update read back as its text", async () => {
    const rfb = await openScreen(owner);
    await rfb.handshake();
    rfb.setEncodings([ENCODING_RAW]);
    const rect = await fullScreen(rfb);
    expect([rect.x, rect.y, rect.width, rect.height, rect.encoding]).toEqual([0, 0, 640, 390, ENCODING_RAW]);
    const { lines, cursor } = readText(rect);
    expect(lines[0]).toBe(`machine ${vps.primaryResourceId} (local substrate)`);
    expect(lines[1]).toMatch(/^image: \S+/);
    const prompt = lines.findIndex((l) => l.startsWith('login:'));
    expect(prompt).toBeGreaterThan(1);
    // Nothing typed yet: the cursor waits just after the prompt.
    expect(cursor).toEqual(['login: '.length, prompt]);
    // A region asked for alone comes alone.
    rfb.requestUpdate(false, 8, 13, 16, 26);
    const [part] = await rfb.readUpdate();
    expect([part!.x, part!.y, part!.width, part!.height]).toEqual([8, 13, 16, 26]);
    expect(part!.data.length).toBe(16 * 26 * 4);
    rfb.ws.close();
  });

  it("takes the holder's keys at the prompt and sends the changed rows to an incremental request", async () => {
    const rfb = await openScreen(owner);
    await rfb.handshake();
    const before = readText(await fullScreen(rfb));
    const prompt = before.lines.findIndex((l) => l.startsWith('login:'));
    rfb.requestUpdate(true, 0, 0, 640, 390);
    type(rfb, 'roox');
    rfb.key(KEY_BACKSPACE);
    type(rfb, 't');
    // Each key's rows come as they change; the screen then shows the line as typed.
    let after = before;
    for (;;) {
      const [rect] = await rfb.readUpdate();
      const band = readText(rect!);
      after = {
        lines: after.lines.map((l, i) => band.lines[i - rect!.y / FONT.height] ?? l),
        cursor: band.cursor ?? after.cursor,
      };
      if (after.lines[prompt] === 'login: root') break;
      rfb.requestUpdate(true, 0, 0, 640, 390);
    }
    expect(after.cursor).toEqual(['login: root'.length, prompt]);
    rfb.key(KEY_RETURN);
    const screen = readText(await fullScreen(rfb));
    expect(screen.lines[prompt]).toBe('login: root');
    expect(screen.lines[prompt + 1]).toMatch(/no operating system to log in to/);
    expect(screen.lines[prompt + 2]).toBe('login:');
    rfb.ws.close();
  });

  it('honours the pixel format a client sets (16-bit RGB565, as a thin client may ask)', async () => {
    const rfb = await openScreen(owner);
    await rfb.handshake();
    const format = Buffer.alloc(20);
    format[0] = 0;
    format.set([16, 16, 0, 1], 4);
    format.writeUInt16BE(31, 8);
    format.writeUInt16BE(63, 10);
    format.writeUInt16BE(31, 12);
    format.set([11, 5, 0], 14);
    rfb.send(format);
    rfb.bitsPerPixel = 16;
    const rect = await fullScreen(rfb);
    expect(rect.data.length).toBe(640 * 390 * 2);
    expect(readText(rect, 2).lines[0]).toBe(`machine ${vps.primaryResourceId} (local substrate)`);
    // The foreground #c0c0c0 in RGB565, little-endian.
    const lit = new Set<number>();
    for (let i = 0; i < rect.data.length; i += 2) lit.add(rect.data.readUInt16LE(i));
    const grey = (max: number) => Math.round((0xc0 * max) / 255);
    expect([...lit].sort((a, b) => a - b)).toEqual([0, (grey(31) << 11) | (grey(63) << 5) | grey(31)]);
    rfb.ws.close();
  });

  it("drops a watcher's keys: only the holder types on the console", async () => {
    // The owner's ticket is taken over before its socket opens: that socket watches from its first byte.
    const watcherTicket = await owner.api.screenTicketCreate({ path: path(), query: { force: true } });
    const holderTicket = await member.api.screenTicketCreate({ path: path(), query: { force: true } });
    const watcher = new RfbClient(await openScreenSocket(watcherTicket));
    const holder = new RfbClient(await openScreenSocket(holderTicket));
    sockets.push(watcher.ws, holder.ws);
    await watcher.handshake();
    await holder.handshake();
    const prompt = readText(await fullScreen(holder)).lines.findIndex((l) => l === 'login:');
    expect(prompt).toBeGreaterThan(1);
    // The watcher's key, then an update of its own: the console read everything sent before it.
    type(watcher, 'w');
    expect(readText(await fullScreen(watcher)).lines[prompt]).toBe('login:');
    type(holder, 'h');
    expect(readText(await fullScreen(holder)).lines[prompt]).toBe('login: h');
    // The watcher still watches: it sees the holder's key.
    expect(readText(await fullScreen(watcher)).lines[prompt]).toBe('login: h');
    holder.key(KEY_BACKSPACE);
    expect(watcher.ws.readyState).toBe(watcher.ws.OPEN);
    watcher.ws.close();
    holder.ws.close();
  });
});

const CHROMIUM = findChromium();

/** What PAGE puts on `window`. */
interface NoVncPage {
  openScreen(url: string, protocols: readonly string[]): Promise<boolean>;
  litPixels(): { lit: number; width: number; height: number };
  rfb: { sendKey(keysym: number, code: string): void };
}

describe.skipIf(!CHROMIUM)('noVNC on the text screen', () => {
  let browser: Browser | undefined;
  afterAll(async () => {
    await browser?.close();
  });

  it('connects, draws the console on its canvas and types at the prompt', async () => {
    browser = await chromium.launch({ executablePath: CHROMIUM! });
    const page = await browser.newPage();
    // What went wrong on the page, if its script never ran: named in the failure.
    const trouble: string[] = [];
    page.on('pageerror', (err) => trouble.push(`page error: ${err.message}`));
    page.on('requestfailed', (req) => trouble.push(`failed: ${req.url()} ${req.failure()?.errorText}`));
    page.on('response', (res) => void (res.status() >= 400 && trouble.push(`${res.status()}: ${res.url()}`)));
    // The page's module graph (noVNC's 25 files) may still be running when the load event fires; on a
    // loaded machine a fresh browser compiles it slowly. Chromium aborts the requests in flight with
    // ERR_NETWORK_CHANGED when an interface comes or goes, and other test files add and remove units'
    // veths all the time: a load cut so is loaded again.
    const cut = () => trouble.some((t) => t.includes('ERR_NETWORK_CHANGED'));
    const loaded = () =>
      page.evaluate(() => typeof (window as unknown as Partial<NoVncPage>).openScreen === 'function');
    for (let attempt = 1; ; attempt += 1) {
      trouble.length = 0;
      const opened = await page.goto(`${origin}/`).then(
        () => null,
        (err: Error) => err.message,
      );
      if (opened) trouble.push(opened);
      const deadline = Date.now() + 60_000;
      while (!opened && !cut() && Date.now() < deadline && !(await loaded()))
        await new Promise((r) => setTimeout(r, 200));
      if (!opened && (await loaded())) break;
      if (!cut() || attempt === 4)
        throw new Error(`noVNC's page did not load: ${trouble.join('; ') || 'no error on the page'}`);
    }
    const ticket = await owner.api.screenTicketCreate({ path: path(), query: { force: true } });
    expect(
      await page.evaluate(([url, protocols]) => (window as unknown as NoVncPage).openScreen(url, protocols), [
        ticket.url,
        ticket.protocols,
      ] as const),
    ).toBe(true);
    const litPixels = () => page.evaluate(() => (window as unknown as NoVncPage).litPixels());
    // noVNC sized its canvas from ServerInit and drew the console's text in its grey.
    await expect.poll(async () => (await litPixels()).lit, { timeout: 15_000 }).toBeGreaterThan(500);
    const before = await litPixels();
    expect([before.width, before.height]).toEqual([COLUMNS * FONT.width, ROWS * FONT.height]);
    // Keys as noVNC sends them: the prompt grows by the glyphs of "ab".
    await page.evaluate(() => {
      (window as unknown as NoVncPage).rfb.sendKey(0x61, 'KeyA');
      (window as unknown as NoVncPage).rfb.sendKey(0x62, 'KeyB');
    });
    const glyphPixels = (char: string) => {
      const at = (char.charCodeAt(0) - FONT.first) * FONT.height;
      return [...GLYPHS.subarray(at, at + FONT.height)].reduce(
        (n, b) => n + b.toString(2).split('1').length - 1,
        0,
      );
    };
    // The cursor (a full cell) moves two cells on: its pixel count is the same before and after.
    await expect
      .poll(async () => (await litPixels()).lit, { timeout: 15_000 })
      .toBe(before.lit + glyphPixels('a') + glyphPixels('b'));
    // The same console, read through the gateway with this file's own client: the prompt shows the keys.
    const rfb = await openScreen(owner);
    await rfb.handshake();
    expect(readText(await fullScreen(rfb)).lines).toContain('login: ab');
    rfb.ws.close();
  }, 180_000);
});
