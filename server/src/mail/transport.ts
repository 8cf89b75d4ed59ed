// Where mail goes: an SMTP server (SMTP_URL), or, on one machine without one, RFC 822 files in
// DATA_DIR/outbox (DECISIONS.md §5) that a developer can open in any mail client.
import { mkdir, rename, writeFile } from 'node:fs/promises';
import { isIP } from 'node:net';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { createTransport } from 'nodemailer';
import type { Config } from '../config.js';

export interface MailToSend {
  id: string;
  from: string;
  to: string;
  subject: string;
  text: string;
  html: string;
  createdAt: Date;
}

export interface MailTransport {
  kind: 'smtp' | 'file';
  /** Resolves with the file written, or null when the mail went to an SMTP server. */
  send(mail: MailToSend): Promise<string | null>;
  close(): void;
  /** Strings a failure message must not carry into the database or the log. */
  secrets: string[];
}

/** The worker's side of mail: the transport, opened once per worker, and how to log deliveries. */
export interface MailSender {
  transport: MailTransport;
  /** The From header: `Hosting Platform <no-reply@{host of PUBLIC_BASE_URL}>` unless given. */
  from: string;
  /** Whether a delivered sign-in code is logged (development without SMTP_URL). */
  logCodes: boolean;
  close(): void;
}

export async function openMailSender(options: {
  config: Pick<Config, 'smtpUrl' | 'dataDir' | 'environment' | 'publicBaseUrl'>;
  log: Logger;
  from?: string;
}): Promise<MailSender> {
  const { config, log } = options;
  const from = options.from ?? defaultFromAddress(config.publicBaseUrl);
  const transport = await createMailTransport({ smtpUrl: config.smtpUrl, dataDir: config.dataDir });
  log.info({ transport: transport.kind, from }, 'mailer started');
  return {
    transport,
    from,
    // DECISIONS.md §5: without SMTP_URL the sign-in code is logged, so a developer can sign in. Only in
    // development: test and production logs never carry a code or a link.
    logCodes: transport.kind === 'file' && config.environment === 'development',
    close: () => transport.close(),
  };
}

// Bounded so a stuck server can not hold a mail past its sender's lease (sender.ts LEASE_MS).
const SMTP_TIMEOUTS = { connectionTimeout: 10_000, greetingTimeout: 10_000, socketTimeout: 30_000 };

export async function createMailTransport(options: {
  smtpUrl: string | null;
  dataDir: string;
}): Promise<MailTransport> {
  if (options.smtpUrl !== null) return smtpTransport(options.smtpUrl);
  return fileTransport(join(options.dataDir, 'outbox'));
}

function smtpTransport(smtpUrl: string): MailTransport {
  // smtp:// upgrades with STARTTLS when offered, smtps:// is TLS from the start; user and password come
  // from the URL. Not pooled: sign-in mail is sparse, and a fresh connection never meets a pooled one
  // that the server closed while idle.
  const transporter = createTransport({ url: smtpUrl, ...SMTP_TIMEOUTS });
  const password = new URL(smtpUrl).password;
  return {
    kind: 'smtp',
    secrets: password ? [password, safeDecode(password)] : [],
    async send(mail) {
      await transporter.sendMail(message(mail));
      return null;
    },
    close: () => transporter.close(),
  };
}

async function fileTransport(dir: string): Promise<MailTransport> {
  // The files hold codes and links: readable by the server's user only.
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const transporter = createTransport({ streamTransport: true, buffer: true, newline: 'unix' });
  return {
    kind: 'file',
    secrets: [],
    async send(mail) {
      const info = await transporter.sendMail(message(mail));
      // Named by time then id, so a directory listing is in order and a resend overwrites its
      // own file; written beside and renamed, so a reader never sees half a message.
      const stamp = mail.createdAt
        .toISOString()
        .replace(/[-:]/g, '')
        .replace(/\.\d+Z$/, 'Z');
      const file = join(dir, `${stamp}_${mail.id}.eml`);
      await writeFile(`${file}.tmp`, info.message as Buffer, { mode: 0o600 });
      await rename(`${file}.tmp`, file);
      return file;
    },
    close: () => transporter.close(),
  };
}

function message(mail: MailToSend) {
  return {
    from: mail.from,
    // An address object, not a string: nodemailer then takes it as one mailbox instead of parsing a list.
    to: { name: '', address: mail.to },
    subject: mail.subject,
    text: mail.text,
    html: mail.html,
    // Auto-Submitted (RFC 3834): no vacation auto-replies to a no-reply sender. The outbox id lets
    // an operator match a delivered message to its row.
    headers: { 'Auto-Submitted': 'auto-generated', 'X-Outbox-Id': mail.id },
  };
}

/** `Name <no-reply@host>` for the platform's public URL; an IP literal is no mail domain, so localhost. */
export function defaultFromAddress(publicBaseUrl: string): string {
  const host = new URL(publicBaseUrl).hostname.replace(/^\[|\]$/g, '');
  return `Hosting Platform <no-reply@${isIP(host) ? 'localhost' : host}>`;
}

function safeDecode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}
