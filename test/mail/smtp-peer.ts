// A real SMTP server (smtp-server) on an ephemeral loopback port that keeps what it receives and can
// be told to refuse recipients or to demand a login, so the sender is tested against the protocol.
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { SMTPServer, type SMTPServerError } from 'smtp-server';
import { parseMail, type ParsedMail } from './mime.js';

export interface PeerMail extends ParsedMail {
  raw: string;
  envelopeFrom: string;
  rcptTo: string[];
  authUser: string | null;
}

export interface SmtpPeer {
  port: number;
  /** `smtp://` URL of this server, with credentials when given (percent-encoded as a URL needs). */
  url(auth?: { user: string; pass: string }): string;
  received: PeerMail[];
  /** Answers RCPT TO with an error for the addresses it returns one for. */
  refuse: ((address: string) => { responseCode: number; message: string } | null) | null;
  /** Resolves with the first mail, received already or later, that matches. */
  waitFor(match: (m: PeerMail) => boolean, timeoutMs?: number): Promise<PeerMail>;
  close(): Promise<void>;
}

export async function startSmtpPeer(
  options: { auth?: { user: string; pass: string } } = {},
): Promise<SmtpPeer> {
  const received: PeerMail[] = [];
  const waiters = new Set<{ match: (m: PeerMail) => boolean; resolve: (m: PeerMail) => void }>();
  const peer: SmtpPeer = {
    port: 0,
    received,
    refuse: null,
    url(auth) {
      const credentials = auth ? `${encodeURIComponent(auth.user)}:${encodeURIComponent(auth.pass)}@` : '';
      return `smtp://${credentials}127.0.0.1:${this.port}`;
    },
    waitFor(match, timeoutMs = 5000) {
      const found = received.find(match);
      if (found) return Promise.resolve(found);
      return new Promise((resolve, reject) => {
        const waiter = {
          match,
          resolve: (m: PeerMail) => {
            clearTimeout(timer);
            waiters.delete(waiter);
            resolve(m);
          },
        };
        const timer = setTimeout(() => {
          waiters.delete(waiter);
          reject(new Error(`no matching mail within ${timeoutMs} ms`));
        }, timeoutMs);
        waiters.add(waiter);
      });
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };

  const server = new SMTPServer({
    logger: false,
    // No STARTTLS offer: the test server has no certificate a client would trust.
    disabledCommands: ['STARTTLS'],
    authOptional: !options.auth,
    allowInsecureAuth: true,
    onAuth(auth, _session, callback) {
      if (options.auth && auth.username === options.auth.user && auth.password === options.auth.pass) {
        callback(null, { user: auth.username });
      } else {
        callback(Object.assign(new Error('Authentication failed'), { responseCode: 535 }));
      }
    },
    onRcptTo(address, _session, callback) {
      const refusal = peer.refuse?.(address.address);
      if (refusal) {
        const err: SMTPServerError = Object.assign(new Error(refusal.message), {
          responseCode: refusal.responseCode,
        });
        callback(err);
      } else callback();
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        const raw = Buffer.concat(chunks).toString('utf8');
        const mail: PeerMail = {
          ...parseMail(raw),
          raw,
          envelopeFrom: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          rcptTo: session.envelope.rcptTo.map((r) => r.address),
          authUser: typeof session.user === 'string' ? session.user : null,
        };
        received.push(mail);
        for (const w of [...waiters]) if (w.match(mail)) w.resolve(mail);
        callback();
      });
    },
  });
  server.listen(0, '127.0.0.1');
  await once(server.server, 'listening');
  peer.port = (server.server.address() as AddressInfo).port;
  return peer;
}
