// The block game's world on its volume (DECISIONS.md §8 "The block game's world"; issue 32 item 2): a
// block placed through RCON's `setblock` and a player's game mode outlive a power stop and start, seen
// again by a real client (mineflayer) through the edge; the stop saves on the agent's SIGTERM; a backup of
// the running game holds the world as it was when asked for (flushed, not the last autosave), and a
// restore brings it back.
import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import mineflayer, { type Bot } from 'mineflayer';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { RconClient } from '../../server/src/games/rcon/client.js';
import { MINECRAFT_VERSION, RCON_PORT } from '../../server/src/workloads/block/version.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { randomPortPool, startTestEdge, type TestEdge } from '../support/edge.js';
import type { Caller } from '../support/organizations.js';
import { awaitOperation, provisionService, serviceCustomer, type Provisioned } from '../support/services.js';
import { startTestSmtp, type TestSmtp } from '../support/smtp.js';

let app: TestApp;
let smtp: TestSmtp;
let edge: TestEdge;
let owner: Caller;
let game: Provisioned;
const clients: RconClient[] = [];
let bot: Bot | undefined;
type Vec3 = Bot['entity']['position'];

beforeAll(async () => {
  smtp = await startTestSmtp();
  app = await startTestApp({
    env: { SMTP_URL: smtp.url, SOURCE_RATE_LIMIT_SCALE: '1000', PORT_POOL: randomPortPool(8) },
  });
  edge = await startTestEdge(app);
  const customer = await serviceCustomer(app, smtp, 'bw');
  owner = customer.owner;
  game = await provisionService(customer.staff.elevated, {
    projectId: customer.projectId,
    productSlug: 'block-game',
    name: 'World',
  });
  await edge.caughtUp();
}, 180_000);
afterAll(async () => {
  bot?.quit();
  for (const c of clients) c.close();
  await edge?.stop();
  await app?.close();
  await smtp?.close();
});

const volume = (...rest: string[]) => join(app.substrateDir, 'volumes', game.volumeResourceId, ...rest);

/** The game's RCON once it answers (the server loads its world after the unit starts). */
async function rcon(): Promise<RconClient> {
  const [row] = await app.sql<{ address: string; password_sealed: string }[]>`
    select host(r.address) as address, c.password_sealed
    from service_resources r join game_rcon_credentials c on c.service_instance_id = r.service_instance_id
    where r.id = ${game.primaryResourceId}`;
  const client = new RconClient({
    host: row!.address,
    port: RCON_PORT,
    password: await app.box.openText('rcon-password', row!.password_sealed),
  });
  clients.push(client);
  const deadline = Date.now() + 60_000;
  while ((await client.command('list').catch(() => null)) === null) {
    if (Date.now() > deadline) throw new Error('the block game never answered RCON');
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  return client;
}

async function joinAs(name: string): Promise<Bot> {
  const { allocations } = await owner.api.externalAccessGet({ path: { id: game.serviceInstanceId } });
  const primary = allocations.find((a) => a.is_primary)!;
  const joined = mineflayer.createBot({
    host: primary.external_ip,
    port: primary.external_port,
    username: name,
    version: MINECRAFT_VERSION,
    auth: 'offline',
  });
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${name} never spawned`)), 60_000);
    joined.once('spawn', () => (clearTimeout(timer), resolve()));
    joined.once('error', reject);
    joined.once('kicked', (reason) => reject(new Error(`kicked: ${JSON.stringify(reason)}`)));
  });
  return joined;
}

/** What the client sees at `at`, once its chunk has arrived. */
async function seen(client: Bot, at: Vec3): Promise<string | undefined> {
  await expect.poll(() => client.blockAt(at)?.name, { timeout: 20_000 }).toBeDefined();
  return client.blockAt(at)?.name;
}

async function power(action: 'start' | 'stop') {
  const accepted = await owner.api.serviceInstancePower({
    path: { id: game.serviceInstanceId },
    body: { action },
  });
  const op = await awaitOperation(owner.api, game.serviceInstanceId, accepted.operation_id, 90_000);
  expect(op).toMatchObject({ kind: action, status: 'succeeded' });
}

const sha = async (file: string) =>
  createHash('sha256')
    .update(await readFile(file))
    .digest('hex');

let spot: Vec3;
let playerFile: string;

it('keeps a placed block and a player state across a power stop and start', async () => {
  let client = await rcon();
  bot = await joinAs('Steve');
  // Beside the player, at its feet: air until set.
  spot = bot.entity.position.floored().offset(2, 0, 1);
  expect(await seen(bot, spot)).toBe('air');
  const [x, y, z] = [spot.x, spot.y, spot.z];
  expect(await client.command(`setblock ${x} ${y} ${z} minecraft:gold_block`)).toBe(
    `Changed the block at ${x}, ${y}, ${z}`,
  );
  await expect.poll(() => bot!.blockAt(spot)?.name).toBe('gold_block');
  expect(await client.command('gamemode creative Steve')).toBe("Set Steve's game mode to Creative Mode");

  await power('stop');
  bot.quit();
  // Vanilla's layout, written by the stop itself (the autosave is 5 minutes away).
  expect((await stat(volume('world', 'level.dat'))).size).toBeGreaterThan(0);
  const regions = (await readdir(volume('world', 'region'))).filter((f) => /^r\.-?\d+\.-?\d+\.mca$/.test(f));
  expect(regions.length).toBeGreaterThan(0);
  const players = await readdir(volume('world', 'playerdata'));
  expect(players).toHaveLength(1);
  playerFile = players[0]!;
  const logs = await readdir(volume('logs'));
  const log = (await Promise.all(logs.map((f) => readFile(volume('logs', f), 'utf8')))).join('\n');
  expect(log).toMatch(/Saved the world \(\d+ chunks\) in \d+ ms/);
  const level = await sha(volume('world', 'level.dat'));

  await power('start');
  client = await rcon();
  bot = await joinAs('Steve');
  expect(await seen(bot, spot)).toBe('gold_block');
  expect(await client.command('data get entity Steve playerGameType')).toBe(
    'Steve has the following entity data: 1',
  );
  // The same world: its level.dat (seed) as made at the first start, the same player file.
  expect(await sha(volume('world', 'level.dat'))).toBe(level);
  expect(await readdir(volume('world', 'playerdata'))).toEqual([playerFile]);
}, 300_000);

it('backs up the running world as it was when asked for, and a restore brings it back', async () => {
  const client = await rcon();
  const [x, y, z] = [spot.x, spot.y, spot.z];
  // Changed just before the backup: only a flush puts it in the archive.
  expect(await client.command(`setblock ${x} ${y} ${z} minecraft:emerald_block`)).toBe(
    `Changed the block at ${x}, ${y}, ${z}`,
  );
  const accepted = await owner.api.backupCreate({
    path: { id: game.serviceInstanceId, resource_id: game.volumeResourceId },
  });
  const made = await awaitOperation(owner.api, game.serviceInstanceId, accepted.operation_id, 90_000);
  expect(made).toMatchObject({ kind: 'backup', status: 'succeeded' });
  // Saving is on again after the archive.
  expect(await client.command('save-on')).toBe('Saving is already turned on');
  const archive = join(app.substrateDir, 'snapshots', game.volumeResourceId, `${accepted.backup.id}.tar.zst`);
  const listed = execFileSync('tar', ['--zstd', '-tf', archive], { encoding: 'utf8' }).split('\n');
  expect(listed.map((f) => f.replace(/^\.\//, ''))).toEqual(
    expect.arrayContaining(['world/level.dat', `world/playerdata/${playerFile}`]),
  );
  expect(listed.some((f) => /world\/region\/r\.-?\d+\.-?\d+\.mca$/.test(f))).toBe(true);

  expect(await client.command(`setblock ${x} ${y} ${z} minecraft:diamond_block`)).toBe(
    `Changed the block at ${x}, ${y}, ${z}`,
  );
  await expect.poll(() => bot!.blockAt(spot)?.name).toBe('diamond_block');
  bot!.quit();

  const restoring = await owner.api.backupRestore({
    path: { id: game.serviceInstanceId, resource_id: game.volumeResourceId, backup_id: accepted.backup.id },
  });
  const restored = await awaitOperation(owner.api, game.serviceInstanceId, restoring.operation_id, 120_000);
  expect(restored).toMatchObject({ kind: 'restore', status: 'succeeded' });
  await rcon();
  bot = await joinAs('Steve');
  expect(await seen(bot, spot)).toBe('emerald_block');
}, 300_000);
