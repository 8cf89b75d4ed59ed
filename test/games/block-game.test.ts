// The block game's server end to end (DECISIONS.md §6 "Games"): provisioning runs a real Minecraft Java
// Edition server (flying-squid, offline mode) that a real client (a mineflayer bot) joins through the
// edge on the primary allocation, and Minecraft's RCON on the unit's address, never forwarded, that the
// platform's RCON client reaches with the password sealed in PostgreSQL. Each player action's command
// is observed from the bot's side, in vanilla's reply formats.
import mineflayer, { type Bot } from 'mineflayer';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { RconClient } from '../../server/src/games/rcon/client.js';
import { staffMember } from '../admin-content/staff.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { randomPortPool, startTestEdge, type TestEdge } from '../support/edge.js';
import { signedIn, type Caller } from '../support/organizations.js';
import { provisionService, type Provisioned } from '../support/services.js';
import { startTestSmtp, type TestSmtp } from '../support/smtp.js';
import { MINECRAFT_VERSION, RCON_PORT } from '../../server/src/workloads/block/version.js';

let app: TestApp;
let smtp: TestSmtp;
let edge: TestEdge;
let owner: Caller;
let game: Provisioned;
let rcon: RconClient;
let bot: Bot;

beforeAll(async () => {
  smtp = await startTestSmtp();
  app = await startTestApp({
    env: { SMTP_URL: smtp.url, SOURCE_RATE_LIMIT_SCALE: '1000', PORT_POOL: randomPortPool(8) },
  });
  edge = await startTestEdge(app);
  const staff = await staffMember(app, smtp, 'bg-staff', ['manage_services']);
  owner = await signedIn(app, smtp, 'bg-owner');
  const orgId = (
    await owner.api.organizationCreate({
      body: { name: 'Blocks', slug: `blocks-${Date.now().toString(36)}` },
    })
  ).id;
  const projectId = (
    await owner.api.projectCreate({ path: { id: orgId }, body: { name: 'Games', slug: 'games' } })
  ).id;
  game = await provisionService(staff.elevated, { projectId, productSlug: 'block-game', name: 'Blocks' });
  await edge.caughtUp();
  const [row] = await app.sql<{ address: string; password_sealed: string }[]>`
    select host(r.address) as address, c.password_sealed
    from service_resources r join game_rcon_credentials c on c.service_instance_id = r.service_instance_id
    where r.id = ${game.primaryResourceId}`;
  rcon = new RconClient({
    host: row!.address,
    port: RCON_PORT,
    password: await app.box.openText('rcon-password', row!.password_sealed),
  });
  // The server loads its world after the unit starts: RCON answers once it is up.
  const deadline = Date.now() + 60_000;
  for (;;) {
    const answer = await rcon.command('list').catch(() => null);
    if (answer !== null) {
      expect(answer).toBe('There are 0 of a max of 20 players online: ');
      break;
    }
    if (Date.now() > deadline) throw new Error('the block game never answered RCON');
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}, 180_000);
afterAll(async () => {
  bot?.quit();
  rcon?.close();
  await edge?.stop();
  await app?.close();
  await smtp?.close();
});

/** `p`, or a failure naming what never happened within `ms`. */
function within<T>(what: string, p: Promise<T>, ms = 20_000): Promise<T> {
  return Promise.race([
    p,
    new Promise<never>((_, reject) =>
      setTimeout(() => reject(new Error(`${what}: nothing within ${ms} ms`)), ms),
    ),
  ]);
}

/** Where players connect: the primary allocation's public address. */
async function target(): Promise<{ host: string; port: number }> {
  const { allocations } = await owner.api.externalAccessGet({ path: { id: game.serviceInstanceId } });
  const primary = allocations.find((a) => a.is_primary)!;
  return { host: primary.external_ip, port: primary.external_port };
}

async function join(name: string): Promise<Bot> {
  const joined = mineflayer.createBot({
    ...(await target()),
    username: name,
    version: MINECRAFT_VERSION,
    auth: 'offline',
  });
  await new Promise<void>((resolve, reject) => {
    joined.once('spawn', () => resolve());
    joined.once('error', reject);
    joined.once('kicked', (reason) => reject(new Error(`kicked: ${JSON.stringify(reason)}`)));
  });
  return joined;
}

it('forwards the game port only, never RCON', async () => {
  const { allocations } = await owner.api.externalAccessGet({ path: { id: game.serviceInstanceId } });
  expect(allocations.map((a) => [a.internal_port, a.protocol])).toEqual([[25565, 'tcp']]);
});

it('lets a real client join through the edge, and RCON sees and acts on it', async () => {
  bot = await within('Alice joining', join('Alice'), 60_000);
  const said: string[] = [];
  bot.on('messagestr', (m) => {
    said.push(m);
  });
  expect(await rcon.command('list uuids')).toMatch(
    /^There are 1 of a max of 20 players online: Alice \([0-9a-f-]{36}\)$/,
  );
  expect(await rcon.command('data get entity Alice Pos')).toMatch(
    /^Alice has the following entity data: \[-?\d+\.\d+d, -?\d+\.\d+d, -?\d+\.\d+d\]$/,
  );
  expect(await rcon.command('data get entity Alice playerGameType')).toBe(
    'Alice has the following entity data: 0',
  );

  expect(await rcon.command('gamemode creative Alice')).toBe("Set Alice's game mode to Creative Mode");
  // The server's state; flying-squid 1.12 does not tell a 1.21.4 client its own new mode (docs/games.md).
  expect(await rcon.command('data get entity Alice playerGameType')).toBe(
    'Alice has the following entity data: 1',
  );

  expect(await rcon.command('give Alice minecraft:diamond 3')).toBe('Gave 3 [minecraft:diamond] to Alice');
  await expect.poll(() => bot.inventory.items().map((i) => [i.name, i.count])).toEqual([['diamond', 3]]);

  expect(await rcon.command('tell Alice meet at spawn')).toBe('You whisper to Alice: meet at spawn');
  expect(await rcon.command('say server restarts soon')).toBe('');
  await expect
    .poll(() => said)
    .toEqual(['Server whispers to you: meet at spawn', '[Rcon] server restarts soon']);

  expect(await rcon.command('op Alice')).toBe('Made Alice a server operator');
  expect(await rcon.command('op Alice')).toBe('Nothing changed. The player already is an operator');
  expect(await rcon.command('deop Alice')).toBe('Made Alice no longer a server operator');

  const kicked = new Promise<unknown>((resolve) => bot.once('kicked', resolve));
  expect(await rcon.command('kick Alice too loud')).toBe('Kicked Alice: too loud');
  expect(JSON.stringify(await within('the kick', kicked))).toContain('too loud');
  await expect.poll(() => rcon.command('list')).toBe('There are 0 of a max of 20 players online: ');
}, 120_000);

it("shows players the server's own lines without raw colour codes (DECISIONS.md §8)", async () => {
  const first = await within('Dana joining', join('Dana'), 60_000);
  const said: string[] = [];
  first.on('messagestr', (m) => {
    said.push(m);
  });
  const second = await within('Steve joining', join('Steve'), 60_000);
  try {
    // flying-squid announces `&eSteve joined the game.`: the code never reaches the client as text.
    await expect.poll(() => said).toContain('Steve joined the game.');
    expect(said.filter((m) => /[&§]/.test(m))).toEqual([]);
  } finally {
    second.quit();
    first.quit();
  }
  await expect.poll(() => rcon.command('list')).toBe('There are 0 of a max of 20 players online: ');
}, 120_000);

it('bans by name, lists the bans, and pardons so the player joins', async () => {
  expect(await rcon.command('ban Mallory griefing')).toBe('Banned Mallory: griefing');
  expect(await rcon.command('banlist players')).toBe(
    'There are 1 ban(s):\nMallory was banned by Rcon: griefing',
  );
  expect(await rcon.command('pardon Mallory')).toBe('Unbanned Mallory');
  expect(await rcon.command('banlist players')).toBe('There are no bans');
  bot = await within('Mallory joining', join('Mallory'), 60_000);
  expect(await rcon.command('list')).toBe('There are 1 of a max of 20 players online: Mallory');
}, 120_000);
