// A real SMTP server (smtp-server) on an ephemeral loopback port that keeps what it receives and can
// be told to refuse recipients or to demand a login, so mail is tested against the protocol.
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { SMTPServer, type SMTPServerError } from 'smtp-server';
import { parseMail, type ParsedMail } from './mime.js';

export interface ReceivedMail extends ParsedMail {
  raw: string;
  /** The envelope sender (MAIL FROM). */
  from: string;
  /** The envelope recipients (RCPT TO). */
  to: string[];
  /** Who logged in to send it, when the server demanded a login. */
  authUser: string | null;
}

export interface TestSmtp {
  port: number;
  /** `smtp://127.0.0.1:PORT`. */
  url: string;
  /** The URL with credentials, percent-encoded as a URL needs. */
  urlWith(auth: { user: string; pass: string }): string;
  messages: ReceivedMail[];
  /** Answers RCPT TO with an error for the addresses it returns one for. */
  refuse: ((address: string) => { responseCode: number; message: string } | null) | null;
  /** Resolves with the first mail, received already or later, that matches. */
  waitFor(match: (m: ReceivedMail) => boolean, timeoutMs?: number): Promise<ReceivedMail>;
  close(): Promise<void>;
}

export async function startTestSmtp(options: { auth?: { user: string; pass: string } } = {}): Promise<TestSmtp> {
  const messages: ReceivedMail[] = [];
  const waiters = new Set<{ match: (m: ReceivedMail) => boolean; resolve: (m: ReceivedMail) => void }>();
  const smtp: TestSmtp = {
    port: 0,
    url: '',
    urlWith(auth) {
      return `smtp://${encodeURIComponent(auth.user)}:${encodeURIComponent(auth.pass)}@127.0.0.1:${this.port}`;
    },
    messages,
    refuse: null,
    waitFor(match, timeoutMs = 5000) {
      const found = messages.find(match);
      if (found) return Promise.resolve(found);
      return new Promise((resolve, reject) => {
        const waiter = {
          match,
          resolve: (m: ReceivedMail) => {
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
      const refusal = smtp.refuse?.(address.address);
      if (refusal) {
        const err: SMTPServerError = Object.assign(new Error(refusal.message), { responseCode: refusal.responseCode });
        callback(err);
      } else callback();
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        const raw = Buffer.concat(chunks).toString('utf8');
        const mail: ReceivedMail = {
          ...parseMail(raw),
          raw,
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          to: session.envelope.rcptTo.map((r) => r.address),
          authUser: typeof session.user === 'string' ? session.user : null,
        };
        messages.push(mail);
        for (const w of [...waiters]) if (w.match(mail)) w.resolve(mail);
        callback();
      });
    },
  });
  server.listen(0, '127.0.0.1');
  await once(server.server, 'listening');
  smtp.port = (server.server.address() as AddressInfo).port;
  smtp.url = `smtp://127.0.0.1:${smtp.port}`;
  return smtp;
}
