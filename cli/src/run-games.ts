// `svcctl game kick | ban | pardon | op | deop | gamemode | whisper | give | broadcast SERVICE_ID ...`:
// one player action each (gameActionRun), the kind given by the command's word. The answer is printed;
// a status other than ok is exit 10 with what it means on stderr. Imported when one runs.
import type { components } from '@svcplatform/sdk';
import type { ParsedInput } from './argv/spec.js';
import { CliError } from './errors.js';
import { ExitCode } from './exit-codes.js';
import type { GlobalFlags } from './global-options.js';
import { writeResult } from './output/write-result.js';
import { openClient } from './sdk-client.js';
import { requireSignIn, resolveSettings } from './settings.js';

type Action = components['schemas']['GameActionRequest'];
export type ActionKind = Action['kind'];

const MEANING: Record<string, string> = {
  unsupported_by_server:
    'the server refused it as given (a player who is not online, an unknown item, a command it lacks)',
  server_offline: 'the server is not running (svcctl power start SERVICE_ID)',
  not_configured: "the service's workload runs no RCON server",
  auth_failed: "the server refused the platform's RCON password",
  unreachable: 'nothing answered on the RCON port though the service runs',
  timeout: 'the server did not answer in time',
  protocol_error: 'the server answered in something that is not RCON',
  parse_error: 'the server answered in words the platform does not know',
};

/** The body of `kind` from the command's arguments (after SERVICE_ID) and options. */
function bodyOf(kind: ActionKind, args: string[], options: Record<string, unknown>): Action {
  const reason = typeof options.reason === 'string' ? { reason: options.reason } : {};
  const [a, b] = args as [string, string];
  switch (kind) {
    case 'kick':
    case 'ban':
      return { kind, name: a, ...reason };
    case 'pardon':
    case 'op':
    case 'deop':
      return { kind, name: a };
    case 'gamemode':
      return { kind, name: a, mode: b as 'survival' };
    case 'whisper':
      return { kind, name: a, message: b };
    case 'give': {
      const count = options.count === undefined ? {} : { count: Number(options.count) };
      return { kind, name: a, item: b, ...count };
    }
    case 'broadcast':
      return { kind, message: a };
  }
}

export async function runGameAction(input: ParsedInput, kind: ActionKind): Promise<void> {
  const [id, ...rest] = input.args as string[];
  const settings = await resolveSettings(input.globals as GlobalFlags);
  requireSignIn(settings);
  const client = await openClient(settings);
  const answer = await client.gameActionRun({
    path: { id: id! },
    body: bodyOf(kind, rest, input.options as Record<string, unknown>),
  });
  await writeResult(answer, settings);
  if (answer.status !== 'ok') {
    throw new CliError(`${kind}: ${answer.status}: ${MEANING[answer.status] ?? 'not done'}`, ExitCode.checkFailed);
  }
}
