// The gateway's SFTP server (document 2 §4 "SFTP"; DECISIONS.md §6 "SFTP"): ssh2's Server on SFTP_PORT
// with the one host key every gateway shares (host-key.ts). An account signs in with its user name and
// the password its last rotate showed (compared with the argon2id digest, in the same time for an
// unknown name); attempts are counted per source address in PostgreSQL. A session offers the `sftp`
// subsystem and nothing else (no shell, exec, PTY, environment, forwarding or agent), confined to the
// service's volume through the file layer (session.ts). Every second the open sessions' accounts are
// read again: one disabled or rotated since it signed in, or a service suspended or ended, is ended
// within 2 seconds (Wings' GHSA-8c39-xppg-479c kept such sessions open).
import { once } from 'node:events';
import type { AddressInfo, Server as NetServer } from 'node:net';
import type { Logger } from 'pino';
import type { Connection } from 'ssh2';
import type { Clock } from '../../clock.js';
import type { Config } from '../../config.js';
import type { Sql } from '../../db/client.js';
import { verifyPassword } from '../../auth/crypto/passwords.js';
import { hit, scaled, type Limit } from '../../ratelimit/limiter.js';
import type { SecretBox } from '../../secrets/secret-box.js';
import type { SubstrateDriver } from '../../substrate/driver.js';
import { sftpTransport } from './transport.js';
import { hostKey } from './host-key.js';
import { serveSftp } from './session.js';
import { accountByUsername, sessionsStillAllowed } from './store.js';

/** Sign-in attempts per source address (scaled by SOURCE_RATE_LIMIT_SCALE, as the API's per-source limits). */
export const SFTP_SIGN_IN_PER_SOURCE: Limit = { name: 'sftp-sign-in:source', max: 20, windowSeconds: 60 };
const ACCESS_CHECK_MS = 1_000;
/** Unauthenticated connections are dropped after this (a slow client holds no slot for long). */
const AUTH_DEADLINE_MS = 30_000;

export interface SftpServerOptions {
  sql: Sql;
  config: Config;
  log: Logger;
  clock: Clock;
  box: SecretBox;
  substrate: SubstrateDriver;
}

export interface SftpServer {
  /** Loads the host key, listens, and starts checking open sessions; answers the port. */
  listen(port: number, host: string): Promise<number>;
  /** Open, signed-in sessions. */
  readonly sessions: number;
  /** Ends every connection and stops listening. */
  close(): Promise<void>;
}

interface Signed {
  client: Connection;
  serviceId: string;
  generation: string;
}

export function createSftpServer(options: SftpServerOptions): SftpServer {
  const { sql, config, log, clock, box, substrate } = options;
  const connections = new Set<Connection>();
  const signed = new Set<Signed>();
  let server: NetServer | null = null;
  let timer: NodeJS.Timeout | null = null;
  const perSource = scaled(SFTP_SIGN_IN_PER_SOURCE, config.sourceRateLimitScale);

  function accept(client: Connection, info: { ip: string }): void {
    connections.add(client);
    let session: Signed | null = null;
    const deadline = setTimeout(() => client.end(), AUTH_DEADLINE_MS);
    deadline.unref();
    client.on('error', () => undefined);
    client.on('close', () => {
      clearTimeout(deadline);
      connections.delete(client);
      if (session) signed.delete(session);
    });

    client.on('authentication', (ctx) => {
      if (ctx.method !== 'password') return ctx.reject(['password']);
      signIn(info.ip, ctx.username, ctx.password)
        .then((account) => {
          if (!account) return ctx.reject(['password']);
          session = { client, serviceId: account.serviceId, generation: account.generation };
          signed.add(session);
          clearTimeout(deadline);
          ctx.accept();
          volumeOf(client, account.volumeId);
        })
        .catch((err: unknown) => {
          log.warn({ err: messageOf(err) }, 'sftp sign-in failed');
          ctx.reject();
        });
    });
    // Nothing but sessions with the sftp subsystem: no port forwarding, no agent, no X11.
    client.on('tcpip', (_accept, reject) => reject());
    client.on('openssh.streamlocal', (_accept, reject) => reject());
    client.on('request', (_accept, reject) => reject?.());
  }

  /** The signed-in client's sessions: each may open the sftp subsystem on the volume, nothing else. */
  function volumeOf(client: Connection, volumeId: string): void {
    client.on('session', (acceptSession) => {
      const channel = acceptSession();
      channel.on('pty', (_a, reject) => reject?.());
      channel.on('x11', (_a, reject) => reject?.());
      channel.on('env', (_a, reject) => reject?.());
      channel.on('auth-agent', (_a, reject) => reject?.());
      channel.on('shell', (_a, reject) => reject?.());
      channel.on('exec', (_a, reject) => reject?.());
      channel.on('subsystem', (_a, reject) => reject?.());
      channel.on('signal', (_a, reject) => reject?.());
      channel.on('window-change', (_a, reject) => reject?.());
      channel.on('sftp', (acceptSftp, reject) => {
        const files = substrate.volumeFiles(volumeId);
        if (!files) return reject?.();
        serveSftp(acceptSftp(), files, (err) => log.warn({ err: messageOf(err) }, 'sftp request failed'));
      });
    });
  }

  async function signIn(
    ip: string,
    username: string,
    password: string,
  ): Promise<{ serviceId: string; generation: string; volumeId: string } | null> {
    const limit = await hit(sql, perSource, ip, clock.now());
    if (!limit.allowed) return null;
    const account = await accountByUsername(sql, username);
    // The same argon2 work for an unknown name, a disabled account or one without a password.
    const { ok } = await verifyPassword(account?.password_digest ?? null, password);
    if (!ok || !account?.usable || !account.volume_id) return null;
    return {
      serviceId: account.service_instance_id,
      generation: account.generation,
      volumeId: account.volume_id,
    };
  }

  async function checkSessions(): Promise<void> {
    if (signed.size === 0) return;
    const sessions = [...signed];
    const allowed = await sessionsStillAllowed(sql, sessions);
    for (const s of sessions) {
      if (!allowed.has(`${s.serviceId}:${s.generation}`)) {
        signed.delete(s);
        s.client.end();
      }
    }
  }

  return {
    get sessions() {
      return signed.size;
    },
    async listen(port, host) {
      const key = await hostKey(sql, box, clock.now());
      server = sftpTransport({ hostKeys: [key.privateKey], ident: 'svc-gateway' }, accept).listener;
      server.listen(port, host);
      await once(server, 'listening');
      let checking = false;
      timer = setInterval(() => {
        if (checking) return;
        checking = true;
        checkSessions()
          .catch((err: unknown) => log.warn({ err: messageOf(err) }, 'could not check open sftp sessions'))
          .finally(() => (checking = false));
      }, ACCESS_CHECK_MS);
      timer.unref();
      return (server.address() as AddressInfo).port;
    },
    async close() {
      if (timer) clearInterval(timer);
      timer = null;
      for (const client of connections) client.end();
      if (server?.listening) await new Promise<void>((resolve) => server!.close(() => resolve()));
      server = null;
    },
  };
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
