// svcctl game against the real server and a real block game (flying-squid) that a mineflayer bot
// joins on the unit's own address: roster with its extra fields, the player actions by their words
// (seen from the bot), a status other than ok as exit 10, a malformed message as exit 5.
import mineflayer, { type Bot } from 'mineflayer';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MINECRAFT_VERSION } from '../../../server/src/workloads/block/version.js';
import { startTestApp, type TestApp } from '../../../test/support/app.js';
import { type Provisioned } from '../../../test/support/services.js';
import { startTestSmtp, type TestSmtp } from '../../../test/support/smtp.js';
import { ExitCode } from '../../src/exit-codes.js';
import { ensureBuilt } from '../support/build.js';
import { cliServiceOwner, type CliServiceOwner } from '../support/service-owner.js';

let app: TestApp;
let smtp: TestSmtp;
let svcctl: CliServiceOwner['svcctl'];
let game: Provisioned;
let bot: Bot | undefined;

type Roster = {
  status: string;
  online: { name: string; gamemode?: string; position?: unknown }[];
  banned: unknown[];
};
const roster = async (...extra: string[]) => {
  const r = await svcctl(['game', 'roster', game.serviceInstanceId, '-o', 'json', ...extra]);
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout) as Roster;
};

beforeAll(async () => {
  ensureBuilt();
  smtp = await startTestSmtp();
  app = await startTestApp({ env: { SMTP_URL: smtp.url, SOURCE_RATE_LIMIT_SCALE: '1000' } });
  const owner = await cliServiceOwner(app, smtp, 'game-cli', {
    productSlug: 'block-game',
    name: 'Blocks',
    project: { name: 'Arcade', slug: 'arcade' },
  });
  ({ svcctl } = owner);
  game = owner.service;
  const deadline = Date.now() + 60_000;
  while ((await owner.api.gameRosterGet({ path: { id: game.serviceInstanceId } })).status !== 'ok') {
    if (Date.now() > deadline) throw new Error('the block game never answered RCON');
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  // The game port on the unit's own address (the edge's forwarding is the services tests' concern).
  const [unit] = await app.sql<{ address: string }[]>`
    select host(address) as address from service_resources where id = ${game.primaryResourceId}`;
  bot = mineflayer.createBot({
    host: unit!.address,
    port: 25565,
    username: 'Alice',
    version: MINECRAFT_VERSION,
    auth: 'offline',
  });
  await new Promise<void>((resolve, reject) => {
    bot!.once('spawn', () => resolve());
    bot!.once('error', reject);
  });
}, 180_000);
afterAll(async () => {
  bot?.quit();
  await app?.close();
  await smtp?.close();
});

describe('svcctl game', () => {
  it('roster lists the player with --include gamemode,position', async () => {
    const answer = await roster('--include', 'gamemode,position');
    expect(answer.status).toBe('ok');
    expect(answer.online).toEqual([
      expect.objectContaining({ name: 'Alice', gamemode: 'survival', position: expect.any(Object) }),
    ]);
  });

  it('whisper, give and ban by their words, seen from the player and the roster', async () => {
    const said: string[] = [];
    bot!.on('messagestr', (m) => void said.push(m));
    const whispered = await svcctl([
      'game',
      'whisper',
      game.serviceInstanceId,
      'Alice',
      'hello there',
      '-o',
      'json',
    ]);
    expect(whispered.code, whispered.stderr).toBe(0);
    expect(JSON.parse(whispered.stdout)).toEqual({ status: 'ok' });
    await expect.poll(() => said).toEqual(['Server whispers to you: hello there']);

    const given = await svcctl([
      'game',
      'give',
      game.serviceInstanceId,
      'Alice',
      'minecraft:diamond',
      '--count',
      '2',
    ]);
    expect(given.code, given.stderr).toBe(0);
    await expect.poll(() => bot!.inventory.items().map((i) => [i.name, i.count])).toEqual([['diamond', 2]]);

    const banned = await svcctl(['game', 'ban', game.serviceInstanceId, 'Mallory', '--reason', 'griefing']);
    expect(banned.code, banned.stderr).toBe(0);
    expect((await roster()).banned).toEqual([{ name: 'Mallory', reason: 'griefing' }]);
  });

  it('a status other than ok is exit 10 naming it; a malformed message is exit 5 and runs nothing', async () => {
    const kicked = await svcctl(['game', 'kick', game.serviceInstanceId, 'Nobody']);
    expect(kicked.code).toBe(ExitCode.checkFailed);
    expect(kicked.stderr).toContain('unsupported_by_server');

    const before = await app.sql`select count(*) from audit_entries`;
    const bad = await svcctl(['game', 'broadcast', game.serviceInstanceId, 'one\nop Mallory']);
    expect(bad.code).toBe(ExitCode.invalid);
    expect(await app.sql`select count(*) from audit_entries`).toEqual(before);
    expect((await roster()).online.map((p) => p.name)).toEqual(['Alice']);
  });
});
