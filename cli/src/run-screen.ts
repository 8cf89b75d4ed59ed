// `svcctl screen SERVICE_ID RESOURCE_ID [--force]`: takes the machine's screen hold and prints the
// screen's URL for noVNC (stdout: the WebSocket URL; stderr: how to open it), then holds the screen
// while it runs, refreshing the hold every 20 s (it lasts 60 s), and releases it on Ctrl-C or SIGTERM.
// Losing the screen to someone's --force ends it with exit 6, naming them. --ticket prints the ticket
// instead (the hold is then the caller's to refresh).
import { isSvcApiError, type SessionClient, type SvcClient } from '@svcplatform/sdk';
import type { ParsedInput } from './argv/spec.js';
import { CliError } from './errors.js';
import { ExitCode } from './exit-codes.js';
import type { GlobalFlags } from './global-options.js';
import { writeResult } from './output/write-result.js';
import { openClient } from './sdk-client.js';
import { requireSignIn, resolveSettings } from './settings.js';

const REFRESH_MS = 20_000;

export async function runScreen(input: ParsedInput): Promise<void> {
  const [id, resourceId] = input.args as [string, string];
  const opts = input.options as { force?: boolean; ticket?: boolean };
  const settings = await resolveSettings(input.globals as GlobalFlags);
  requireSignIn(settings);
  const client: SvcClient | SessionClient = await openClient(settings);
  const path = { id, resource_id: resourceId };
  const ticket = await client
    .screenTicketCreate({ path, query: opts.force ? { force: true } : {} })
    .catch((err: unknown) => {
      if (isSvcApiError(err) && err.code === 'screen-held') {
        const holder = (err.details as { holder_name?: string } | null)?.holder_name ?? 'someone else';
        throw new CliError(`the screen is held by ${holder}; --force takes it over`, ExitCode.conflict);
      }
      throw err;
    });
  if (opts.ticket) {
    await writeResult(ticket, settings);
    return;
  }
  process.stdout.write(`${ticket.url}\n`);
  process.stderr.write(
    `Open it within 60 s in noVNC (RFB over WebSocket, subprotocol ${ticket.protocols.join(', ')}), ` +
      `e.g. vnc.html?${noVncQuery(ticket.url)}\n` +
      'Holding the screen while this runs; Ctrl-C releases it.\n',
  );

  await new Promise<void>((resolve, reject) => {
    let ending = false;
    const end = (err?: CliError) => {
      if (ending) return;
      ending = true;
      clearInterval(timer);
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
      if (err) return reject(err);
      client
        .screenHoldRelease({ path, query: { session_id: ticket.session_id } })
        .then(
          () => process.stderr.write('Released the screen.\n'),
          () => process.stderr.write('Could not release the screen; it lapses within a minute.\n'),
        )
        .finally(resolve);
    };
    const onSignal = () => end();
    const timer = setInterval(() => {
      client.screenHoldRefresh({ path, body: { session_id: ticket.session_id } }).then(
        (hold) => {
          if (hold.held) return;
          const by = hold.holder_name ? `${hold.holder_name} took it over` : 'the hold lapsed';
          end(new CliError(`lost the screen: ${by}`, ExitCode.conflict));
        },
        () => undefined, // a refresh that failed is tried again; the hold lasts three of them
      );
    }, REFRESH_MS);
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
  });
}

/** noVNC's vnc.html parameters for the screen URL: host, port, path (with the ticket), encrypt. */
function noVncQuery(url: string): string {
  const u = new URL(url);
  const secure = u.protocol === 'wss:';
  const params = new URLSearchParams({
    host: u.hostname,
    port: u.port || (secure ? '443' : '80'),
    path: `${u.pathname.slice(1)}${u.search}`,
    encrypt: secure ? '1' : '0',
    autoconnect: 'true',
    shared: 'true',
  });
  return params.toString();
}
