// The local probe's process listing (drivers.ts processesUnder): a child still between its fork and its
// exec shows its parent's command line and is not a process of its own; one with a command line of its
// own is. A shell's subshell `( ... )` is such a fork that never execs.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, processesUnder } from './drivers.js';

let dir: string;
const children: ChildProcess[] = [];
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'svc-probe-'));
});
afterAll(async () => {
  for (const c of children) {
    try {
      if (c.pid) process.kill(-c.pid, 'SIGKILL');
    } catch {
      c.kill('SIGKILL');
    }
  }
  await rm(dir, { recursive: true, force: true });
});

describe('processesUnder', () => {
  it('counts a process naming the directory once, not its fork that has not exec-ed', async () => {
    // sh forks the subshell (same command line) and waits; the subshell forks sleep and waits.
    // In a process group of its own, so the end of the test takes the subshell and its sleep too.
    const parent = spawn('sh', ['-c', '(sleep 60; :) & wait', 'sh', dir], {
      cwd: tmpdir(),
      stdio: 'ignore',
      detached: true,
    });
    children.push(parent);
    // Once the subshell runs, it is listed apart by /proc but not counted.
    await eventually('the subshell', async () => {
      const kids = execFileSync('ps', ['-o', 'pid=', '--ppid', String(parent.pid)], {
        encoding: 'utf8',
      }).trim();
      return kids !== '' ? true : undefined;
    });
    expect(await processesUnder(dir)).toEqual([parent.pid]);

    // A child that exec-ed a command line naming the directory is counted.
    const own = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60_000)', dir], {
      cwd: tmpdir(),
      stdio: 'ignore',
    });
    children.push(own);
    await eventually('the second process', async () =>
      (await processesUnder(dir)).length === 2 ? true : undefined,
    );
    expect((await processesUnder(dir)).sort()).toEqual([parent.pid, own.pid].sort());
  });
});
