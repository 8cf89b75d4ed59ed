// The operator command's arguments: `grant|revoke --email E --permission P [P ...]`, `users [--json]`,
// `domain-connect public-key`, `local-ca`, `units stop --all|SERVICE`.
import {
  isSystemPermission,
  SYSTEM_PERMISSIONS,
  type SystemPermission,
} from '../../server/src/authz/system-permissions.js';

export type Command =
  | { kind: 'grant' | 'revoke'; email: string; permissions: SystemPermission[] }
  | { kind: 'users'; json: boolean }
  | { kind: 'domain-connect-public-key' }
  | { kind: 'local-ca' }
  | { kind: 'units-stop'; service: string | null }
  | { kind: 'help' };

/** A mistake in the command line: printed with the usage, exit code 2. */
export class UsageError extends Error {
  override name = 'UsageError';
}

export const USAGE = `usage: npm run admin -- <command>

  grant  --email E --permission P [P ...]   give a user system permissions (all: every one)
  revoke --email E --permission P [P ...]   take them away (all: every one)
  users [--json]                            list staff (users holding any system permission)
  domain-connect public-key                 print the TXT records that publish the public half of
                                            DOMAIN_CONNECT_SIGNING_KEY (no database needed)
  local-ca                                  print the local CA's certificate (PEM), which TLS clients
                                            trust to reach the platform's hosts over HTTPS
  units stop --all | SERVICE                stop every unit, or those of the service instance SERVICE
                                            (its id), their programs with them; the next \`npm start\`
                                            starts again those that should run

permissions: ${SYSTEM_PERMISSIONS.join(', ')}, all
The database is the one \`npm start\` uses: DATABASE_URL, else the embedded one in DATA_DIR.`;

export function parseArgs(argv: string[]): Command {
  const [command, ...rest] = argv;
  if (command === undefined)
    throw new UsageError('a command is required (grant, revoke, users, domain-connect, local-ca or units)');
  if (command === 'help' || command === '--help' || command === '-h') return { kind: 'help' };
  if (rest.includes('--help') || rest.includes('-h')) return { kind: 'help' };
  if (command === 'users') {
    let json = false;
    for (const arg of rest) {
      if (arg === '--json') json = true;
      else throw new UsageError(`users takes only --json, got "${arg}"`);
    }
    return { kind: 'users', json };
  }
  if (command === 'domain-connect') {
    if (rest.length !== 1 || rest[0] !== 'public-key')
      throw new UsageError('domain-connect takes one subcommand: public-key');
    return { kind: 'domain-connect-public-key' };
  }
  if (command === 'local-ca') {
    if (rest.length > 0) throw new UsageError(`local-ca takes no arguments, got "${rest[0]}"`);
    return { kind: 'local-ca' };
  }
  if (command === 'units') return unitsCommand(rest);
  if (command !== 'grant' && command !== 'revoke') {
    throw new UsageError(
      `unknown command "${command}" (commands: grant, revoke, users, domain-connect, local-ca, units)`,
    );
  }

  let email: string | null = null;
  const named: string[] = [];
  let sawPermission = false;
  for (let i = 0; i < rest.length; i += 1) {
    const arg = rest[i]!;
    const [flag, inline] =
      arg.startsWith('--') && arg.includes('=')
        ? [arg.slice(0, arg.indexOf('=')), arg.slice(arg.indexOf('=') + 1)]
        : [arg, null];
    if (flag === '--email') {
      const value = inline ?? rest[(i += 1)];
      if (value === undefined || value.startsWith('--') || value.trim() === '')
        throw new UsageError('--email needs an address');
      if (email !== null) throw new UsageError('--email may be given once');
      email = value.trim().toLowerCase();
    } else if (flag === '--permission' || flag === '--permissions') {
      sawPermission = true;
      if (inline !== null) named.push(...inline.split(','));
      // Every following word up to the next option is a permission.
      while (i + 1 < rest.length && !rest[i + 1]!.startsWith('--')) named.push(...rest[(i += 1)]!.split(','));
    } else {
      throw new UsageError(`unexpected argument "${arg}"`);
    }
  }
  if (email === null) throw new UsageError(`${command} needs --email`);
  const words = named.map((p) => p.trim()).filter(Boolean);
  if (!sawPermission || words.length === 0)
    throw new UsageError(`${command} needs --permission P [P ...] (or all)`);
  const unknown = words.filter((p) => p !== 'all' && !isSystemPermission(p));
  if (unknown.length > 0) {
    throw new UsageError(
      `unknown permission${unknown.length > 1 ? 's' : ''} ${unknown.map((p) => `"${p}"`).join(', ')} ` +
        `(valid: ${SYSTEM_PERMISSIONS.join(', ')}, or all)`,
    );
  }
  const permissions = words.includes('all')
    ? [...SYSTEM_PERMISSIONS]
    : SYSTEM_PERMISSIONS.filter((p) => words.includes(p));
  return { kind: command, email, permissions };
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function unitsCommand(rest: string[]): Command {
  const [sub, ...args] = rest;
  if (sub !== 'stop') throw new UsageError('units takes one subcommand: stop --all | SERVICE');
  if (args.length !== 1) throw new UsageError('units stop takes --all or one service instance id');
  const [target] = args as [string];
  if (target === '--all') return { kind: 'units-stop', service: null };
  if (!UUID.test(target))
    throw new UsageError(`units stop: "${target}" is not a service instance id (a uuid)`);
  return { kind: 'units-stop', service: target.toLowerCase() };
}
