// A real recursive resolver (Debian's unbound) for tests: stub zones pointing at a test server, so a
// question goes through a resolver the way a customer's would. Absent unbound, `startUnbound` answers null.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import dns2 from 'dns2';
import { freePort } from './app.js';

const UNBOUND = '/usr/sbin/unbound';

export interface TestUnbound {
  port: number;
  /** A recursive question (rd=1) and its reply. */
  resolve(name: string, type: string): Promise<dns2.Packet>;
  stop(): Promise<void>;
}

export async function startUnbound(stubs: { zone: string; server: string }[]): Promise<TestUnbound | null> {
  if (!existsSync(UNBOUND)) return null;
  const dir = mkdtempSync(join(tmpdir(), 'unbound-'));
  const port = await freePort();
  const conf = join(dir, 'unbound.conf');
  writeFileSync(
    conf,
    [
      'server:',
      '  interface: 127.0.0.1',
      `  port: ${port}`,
      '  do-daemonize: no',
      '  username: ""',
      '  chroot: ""',
      `  directory: "${dir}"`,
      '  pidfile: ""',
      '  use-syslog: no',
      '  do-ip6: no',
      '  do-not-query-localhost: no',
      '  module-config: "iterator"',
      '  access-control: 127.0.0.0/8 allow',
      '  local-zone: "test." nodefault',
      ...stubs.flatMap((s) => [
        'stub-zone:',
        `  name: "${s.zone}"`,
        `  stub-addr: ${s.server.replace(':', '@')}`,
      ]),
      '',
    ].join('\n'),
  );
  const proc: ChildProcess = spawn(UNBOUND, ['-d', '-c', conf], { stdio: 'ignore' });
  const client = dns2.UDPClient({ dns: '127.0.0.1', port, timeout: 2_000, retryOverTCP: false });
  const deadline = Date.now() + 10_000;
  for (;;) {
    try {
      await client(stubs[0]!.zone, 'SOA');
      break;
    } catch {
      if (Date.now() > deadline || proc.exitCode !== null) {
        proc.kill('SIGKILL');
        throw new Error('unbound did not start');
      }
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  return {
    port,
    resolve: (name, type) => client(name, type),
    async stop() {
      if (proc.exitCode === null) {
        const exited = new Promise((r) => proc.once('exit', r));
        proc.kill('SIGTERM');
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
