// The agent's workload supervision, on real processes: its directory and environment, restarts with
// backoff, and a stop that ends it.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { AgentLog } from '../../server/src/agent/log.js';
import { superviseWorkload, type Workload } from '../../server/src/agent/workload.js';
import { pidAlive } from '../../server/src/substrate/local/proc.js';
import { eventually } from '../substrate/drivers.js';

let dir: string;
let workload: Workload | null;
const lines: string[] = [];
const log: AgentLog = { info: (msg) => lines.push(msg), warn: (msg) => lines.push(msg) };

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'svc-workload-'));
  workload = null;
  lines.length = 0;
});

afterEach(async () => {
  await workload?.stop();
  await rm(dir, { recursive: true, force: true });
});

/** Each start appends "pid env" to runs.txt; `then` says what the process does next. */
const recorder = (then: string) => [
  process.execPath,
  '-e',
  `require('node:fs').appendFileSync('runs.txt', process.pid + ' ' + process.env.GREETING + ' ' + (process.env.AGENT_SECRET ?? '-') + '\\n'); ${then}`,
];
const runs = async () =>
  (await readFile(join(dir, 'runs.txt'), 'utf8').catch(() => ''))
    .split('\n')
    .filter(Boolean)
    .map((line) => line.split(' '));

describe('superviseWorkload', () => {
  it('runs the command in its directory with the given environment only', async () => {
    process.env.AGENT_SECRET = 'must-not-leak';
    try {
      workload = superviseWorkload({
        command: recorder('setInterval(() => {}, 1000);'),
        cwd: dir,
        env: () => ({ PATH: process.env.PATH, GREETING: 'hi' }),
        pidFile: join(dir, 'workload.pid'),
        log,
      });
      const [[pid, greeting, secret]] = (await eventually('a run', async () =>
        (await runs()).length ? runs() : undefined,
      )) as [string[]];
      expect([greeting, secret]).toEqual(['hi', '-']);
      expect(JSON.parse(await readFile(join(dir, 'workload.pid'), 'utf8'))).toEqual({
        pid: Number(pid),
        group: process.pid,
      });

      await workload.stop();
      expect(pidAlive(Number(pid))).toBe(false);
      await expect(readFile(join(dir, 'workload.pid'))).rejects.toThrow(/ENOENT/);
    } finally {
      delete process.env.AGENT_SECRET;
    }
  });

  it('restarts a command that exits, with growing delays, and not after stop', async () => {
    workload = superviseWorkload({
      command: recorder('process.exit(3);'),
      cwd: dir,
      env: () => ({ PATH: process.env.PATH, GREETING: 'again' }),
      pidFile: join(dir, 'workload.pid'),
      log,
      backoff: { firstMs: 20, maxMs: 40 },
    });
    // Three runs recorded and three exits seen: a run records itself before it exits.
    await eventually('two restarts', async () =>
      (await runs()).length >= 3 && lines.filter((l) => l.startsWith('workload exited')).length >= 3
        ? true
        : undefined,
    );
    expect(lines.filter((l) => l.startsWith('workload exited')).slice(0, 3)).toEqual([
      'workload exited with code 3; restarting in 20 ms',
      'workload exited with code 3; restarting in 40 ms',
      'workload exited with code 3; restarting in 40 ms',
    ]);
    await workload.stop();
    const count = (await runs()).length;
    // Nothing to wait for: this proves an absence, over several restart delays (and process starts).
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect((await runs()).length).toBe(count);
  });

  it('reports a command that cannot start, and keeps trying', async () => {
    workload = superviseWorkload({
      command: [join(dir, 'no-such-program')],
      cwd: dir,
      env: () => ({}),
      pidFile: join(dir, 'workload.pid'),
      log,
    });
    await eventually('the failure logged', async () =>
      lines.some((l) => l.includes('could not start (ENOENT)')) ? true : undefined,
    );
    expect(lines.at(-1)).toBe('workload could not start (ENOENT); restarting in 1000 ms');
  });
});
