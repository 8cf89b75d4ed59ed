// A real SMTP server on loopback that keeps what it receives, for tests that read the mail.
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

export interface ReceivedMail {
  from: string;
  to: string[];
  raw: string;
  subject: string;
  /** The decoded text of every part, joined: enough to find codes and links. */
  text: string;
}

function decodeQuotedPrintable(s: string): string {
  const bytes = Buffer.from(
    s.replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/gi, (_m, hex: string) => String.fromCharCode(parseInt(hex, 16))),
    'latin1',
  );
  return bytes.toString('utf8');
}

/** Decodes each MIME part's body by its transfer encoding; headers are left as they are. */
export function decodeParts(raw: string): string {
  const out: string[] = [];
  for (const part of raw.split(/\r?\n--[^\r\n]+\r?\n/)) {
    const split = part.search(/\r?\n\r?\n/);
    if (split < 0) continue;
    const headers = part.slice(0, split);
    const body = part.slice(split).trim();
    if (/content-transfer-encoding:\s*quoted-printable/i.test(headers)) out.push(decodeQuotedPrintable(body));
    else if (/content-transfer-encoding:\s*base64/i.test(headers)) out.push(Buffer.from(body, 'base64').toString('utf8'));
    else out.push(body);
  }
  return out.join('\n');
}

function subjectOf(raw: string): string {
  const m = /^Subject: (.*(?:\r?\n[ \t].*)*)/im.exec(raw);
  const value = (m?.[1] ?? '').replace(/\r?\n[ \t]/g, ' ');
  // RFC 2047 encoded words, as nodemailer writes non-ASCII subjects.
  return value.replace(/=\?utf-8\?([bq])\?([^?]*)\?=/gi, (_m, enc: string, text: string) =>
    enc.toLowerCase() === 'b'
      ? Buffer.from(text, 'base64').toString('utf8')
      : decodeQuotedPrintable(text.replace(/_/g, ' ')),
  );
}

export interface TestSmtp {
  url: string;
  messages: ReceivedMail[];
  /** Resolves with the first message (already received or arriving) that matches. */
  waitFor(match: (m: ReceivedMail) => boolean, timeoutMs?: number): Promise<ReceivedMail>;
  close(): Promise<void>;
}

export async function startTestSmtp(): Promise<TestSmtp> {
  const messages: ReceivedMail[] = [];
  const waiters: { match: (m: ReceivedMail) => boolean; resolve: (m: ReceivedMail) => void }[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        const raw = Buffer.concat(chunks).toString('utf8');
        const mail: ReceivedMail = {
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          to: session.envelope.rcptTo.map((r) => r.address),
          raw,
          subject: subjectOf(raw),
          text: decodeParts(raw),
        };
        messages.push(mail);
        for (const w of [...waiters]) {
          if (w.match(mail)) {
            waiters.splice(waiters.indexOf(w), 1);
            w.resolve(mail);
          }
        }
        callback();
      });
    },
  });
  server.listen(0, '127.0.0.1');
  await once(server.server, 'listening');
  const { port } = server.server.address() as AddressInfo;
  return {
    url: `smtp://127.0.0.1:${port}`,
    messages,
    waitFor(match, timeoutMs = 5000) {
      const found = messages.find(match);
      if (found) return Promise.resolve(found);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error('no matching mail arrived')), timeoutMs);
        waiters.push({
          match,
          resolve: (m) => {
            clearTimeout(timer);
            resolve(m);
          },
        });
      });
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
