// `svcctl login --provider ID`: the OAuth browser flow for a terminal (RFC 8252, native apps). svcctl
// listens on a loopback redirect (one the server's OAUTH_REDIRECT_ALLOWLIST names, default
// http://127.0.0.1:8976/callback), asks the server to start the flow with it as redirect_to, prints the
// provider's URL and opens a browser when it can; the browser signs in at the provider, passes the
// server's callback and lands on the loopback listener with ?key= (or ?error=), and svcctl redeems the
// key for a session and saves it like `svcctl login`. Also `svcctl oauth complete --key KEY`.
// Imported when one of them runs.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { components } from '@svcplatform/sdk';
import type { ParsedInput } from './argv/spec.js';
import { CliError, UsageError } from './errors.js';
import { ExitCode } from './exit-codes.js';
import type { GlobalFlags } from './global-options.js';
import { writeResult } from './output/write-result.js';
import { describeUser, endQuietly } from './run-sign-in.js';
import { openPublicClient } from './sdk-client.js';
import { readSession, storeSession } from './session-store.js';
import { resolveSettings, type Settings } from './settings.js';
import { printJson, say } from './sign-in-input.js';

type Session = components['schemas']['Session'];

/** The loopback redirect svcctl listens on unless told otherwise (add it to OAUTH_REDIRECT_ALLOWLIST). */
export const DEFAULT_REDIRECT_URI = 'http://127.0.0.1:8976/callback';
/** The server's flow lives 10 minutes; waiting longer is pointless. */
const WAIT_MS = 10 * 60 * 1000;
const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]']);

export interface OAuthLoginOptions {
  provider?: string;
  redirectUri?: string;
  browser?: boolean;
  noBrowser?: boolean;
  nonInteractive?: boolean;
}

/** The problem codes the callback may send back, in words. */
const CALLBACK_ERRORS: Record<string, string> = {
  email_conflict:
    'an account with the address the provider reported exists already: sign in to it (svcctl login) and link the provider from there',
  email_required: 'the provider reported no verified email address, which a new account needs',
  reseller_paused: 'sign-ups through this reseller are paused',
  login_failed: 'the sign-in failed at the provider or was not accepted',
};

export async function runOAuthLogin(input: ParsedInput): Promise<void> {
  const opts = input.options as OAuthLoginOptions;
  const provider = opts.provider!;
  const redirect = loopbackRedirect(
    opts.redirectUri ?? process.env.SVCCTL_OAUTH_REDIRECT_URI ?? DEFAULT_REDIRECT_URI,
  );
  const settings = await resolveSettings(input.globals as GlobalFlags);
  const listener = await listen(redirect);
  try {
    const client = await openPublicClient(settings);
    const started = await client.oauthSignInStart({
      path: { provider },
      query: { redirect_to: redirect.href },
    });
    // A provider the server cannot reach sends the browser straight back with the error.
    const early = new URL(started.redirect_to);
    if (early.origin === redirect.origin && early.pathname === redirect.pathname)
      failWith(early.searchParams.get('error'));

    say(settings, `Sign in with ${provider} in your browser:\n\n  ${started.redirect_to}\n`);
    if (opts.noBrowser !== true && !process.env.SVCCTL_NO_BROWSER) openBrowser(started.redirect_to);
    say(settings, `Waiting for the browser to come back to ${redirect.href} ...`);
    const back = await listener.result;
    const key = back.searchParams.get('key');
    if (!key) failWith(back.searchParams.get('error'));
    await completeAndSave(settings, key, opts.nonInteractive === true, input.globals as GlobalFlags);
  } finally {
    await listener.close();
  }
}

/** `svcctl oauth complete --key KEY`: the key from ?key= for a session, saved for the profile. */
export async function runOAuthComplete(input: ParsedInput): Promise<void> {
  const key = (input.options as { key?: string }).key;
  if (!key) throw new UsageError('--key is required: the key the sign-in sent back in ?key=');
  const globals = input.globals as GlobalFlags;
  await completeAndSave(await resolveSettings(globals), key, false, globals);
}

async function completeAndSave(
  settings: Settings,
  key: string,
  machine: boolean,
  globals: GlobalFlags,
): Promise<void> {
  const previous = await readSession(settings.profile, settings.configDir);
  const client = await openPublicClient(settings);
  const session: Session = await client.oauthComplete({ body: { key } });
  await storeSession(
    settings.profile,
    { token: session.token, refreshToken: session.refresh_token, sessionId: session.session_id },
    settings.configDir,
    { claim: true },
  );
  if (previous && previous.sessionId !== session.session_id) await endQuietly(settings, previous);
  const summary = { profile: settings.profile, session_id: session.session_id, user: session.user };
  if (machine) printJson(settings, summary);
  else if (globals.outputFormat) await writeResult(summary, settings);
  else say(settings, `Signed in as ${describeUser(session.user)} (profile "${settings.profile}").`);
}

function failWith(code: string | null): never {
  const reason = (code && CALLBACK_ERRORS[code]) ?? 'the browser came back without a sign-in key';
  throw new CliError(`not signed in${code ? ` (${code})` : ''}: ${reason}`, ExitCode.auth);
}

/** The redirect as a URL svcctl can listen on: http, a loopback host, an explicit port. */
function loopbackRedirect(raw: string): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new UsageError(`--redirect-uri must be a URL such as ${DEFAULT_REDIRECT_URI}, got "${raw}"`);
  }
  if (url.protocol !== 'http:' || !LOOPBACK.has(url.hostname) || url.port === '' || url.search || url.hash) {
    throw new UsageError(
      `--redirect-uri must be http://127.0.0.1:PORT/PATH (a loopback address with a port, RFC 8252 §7.3), got "${raw}"`,
    );
  }
  return url;
}

interface Listener {
  /** The URL the browser came back to. */
  result: Promise<URL>;
  close(): Promise<void>;
}

/** Listens on the redirect's host and port; the first request to its path settles `result`. */
async function listen(redirect: URL): Promise<Listener> {
  let settle!: { resolve: (u: URL) => void; reject: (e: Error) => void };
  const result = new Promise<URL>((resolve, reject) => (settle = { resolve, reject }));
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', redirect);
    if (url.pathname !== redirect.pathname || req.method !== 'GET') {
      res.statusCode = 404;
      res.end();
      return;
    }
    const ok = url.searchParams.has('key');
    res.setHeader('content-type', 'text/html; charset=utf-8');
    res.setHeader('cache-control', 'no-store');
    res.setHeader('referrer-policy', 'no-referrer');
    res.end(
      `<!doctype html><title>svcctl</title><p>${ok ? 'Signed in to svcctl. You can close this tab.' : 'The sign-in did not succeed; svcctl says why.'}</p>`,
    );
    settle.resolve(url);
  });
  const timer = setTimeout(
    () =>
      settle.reject(
        new CliError('no answer from the browser within 10 minutes; run svcctl login --provider again'),
      ),
    WAIT_MS,
  );
  timer.unref();
  server.on('error', (err: NodeJS.ErrnoException) => settle.reject(err));
  try {
    server.listen(Number(redirect.port), redirect.hostname.replace(/^\[|\]$/g, ''));
    await once(server, 'listening');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new CliError(
      code === 'EADDRINUSE'
        ? `${redirect.host} is in use: close what listens there, or use another --redirect-uri the server allows`
        : `cannot listen on ${redirect.host}: ${(err as Error).message}`,
    );
  }
  return {
    result,
    async close() {
      clearTimeout(timer);
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}

/** Opens `url` in the desktop's browser, if there is one; the printed URL is there when not. */
function openBrowser(url: string): void {
  const [command, args] =
    process.platform === 'darwin'
      ? ['open', [url]]
      : process.platform === 'win32'
        ? ['cmd', ['/c', 'start', '""', url.replace(/&/g, '^&')]]
        : ['xdg-open', [url]];
  try {
    const child = spawn(command, args as string[], { stdio: 'ignore', detached: true });
    child.on('error', () => undefined);
    child.unref();
  } catch {
    // No browser to open: the URL was printed.
  }
}
