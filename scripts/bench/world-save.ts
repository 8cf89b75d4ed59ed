// The block game's world save (issue 32 "Benchmarks"): the real program (server/src/workloads/block-game.ts)
// in a fresh volume, 100 chunks changed by `setblock` over RCON (one block in each of a 10x10 grid), then
// `save-all` timed over RCON, then one more change in every chunk and the time from SIGTERM to the
// program's exit (the agent's stop: SIGKILL follows after ~4 s, so this must stay well under it).
//
//   npx tsx scripts/bench/world-save.ts [--chunks-side=10]
import { spawn } from 'node:child_process';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { RconClient } from '../../server/src/games/rcon/client.js';
import { RCON_PORT } from '../../server/src/workloads/block/version.js';
import { workloadCommand } from '../../server/src/workloads/command.js';

const { values } = parseArgs({ options: { 'chunks-side': { type: 'string', default: '10' } } });
const side = Number(values['chunks-side']);
const volume = await mkdtemp(join(tmpdir(), 'world-save-'));
// A loopback address of its own: RCON's fixed port never meets another server's.
const host = '127.0.91.7';
const password = 'bench';
const [node, ...args] = workloadCommand('block-game')!;
const game = spawn(node!, args, {
  cwd: volume,
  env: {
    ...process.env,
    HOME: volume,
    SVC_BIND_ADDRESS: host,
    SVC_PUBLIC_ENDPOINTS: JSON.stringify([{ protocols: ['tcp'], internal_port: 0 }]),
    SVC_RCON_PASSWORD: password,
  },
  stdio: ['pipe', 'ignore', 'inherit'],
});
const rcon = new RconClient({ host, port: RCON_PORT, password, commandTimeoutMs: 60_000 });
try {
  const deadline = Date.now() + 60_000;
  while ((await rcon.command('list').catch(() => null)) === null) {
    if (Date.now() > deadline) throw new Error('the block game never answered RCON');
    await new Promise((r) => setTimeout(r, 250));
  }
  const change = async (block: string) => {
    for (let x = 0; x < side; x += 1)
      for (let z = 0; z < side; z += 1) await rcon.command(`setblock ${x * 16} -50 ${z * 16} ${block}`);
  };
  await change('gold_block');
  let at = performance.now();
  await rcon.command('save-all flush');
  const saveMs = performance.now() - at;
  await change('emerald_block');
  at = performance.now();
  const exited = new Promise<void>((resolve) => game.once('exit', () => resolve()));
  game.kill('SIGTERM');
  await exited;
  const stopMs = performance.now() - at;
  const regions = await readdir(join(volume, 'world', 'region'));
  console.log(
    JSON.stringify({
      chunks: side * side,
      save_all_ms: Math.round(saveMs),
      sigterm_to_exit_ms: Math.round(stopMs),
      regions,
    }),
  );
} finally {
  rcon.close();
  if (game.exitCode === null) game.kill('SIGKILL');
  await rm(volume, { recursive: true, force: true });
}
