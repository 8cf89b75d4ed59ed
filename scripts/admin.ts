// `npm run admin -- grant|revoke --email E --permission P [P ...]`, `npm run admin -- users [--json]`,
// `npm run admin -- domain-connect public-key`, `npm run admin -- local-ca` (the local CA's certificate,
// made in DATA_DIR if missing), `npm run admin -- units stop --all | SERVICE`:
// the operator command (DECISIONS.md §4 "Operator commands"), run on the server machine with the
// environment of `npm start`. Exit codes: 0 done (also when nothing needed to change), 1 failure,
// 2 usage or configuration error.
import { userInfo } from 'node:os';
import { localCaCertificatePem } from '../server/src/certificates/local-ca.js';
import { ConfigError, loadConfig, redactUrl, type Config } from '../server/src/config.js';
import { parseArgs, USAGE, UsageError, type Command } from './admin/args.js';
import { AdminError, openDatabase, type AdminDatabase } from './admin/database.js';
import { describeChange, staffTable } from './admin/format.js';
import { publicKeyZoneLines } from './admin/domain-connect.js';
import { changePermissions, listStaff } from './admin/staff.js';
import { stopUnits } from './admin/units.js';

function operatorName(): string {
  try {
    return userInfo().username;
  } catch {
    return process.env.USER ?? process.env.LOGNAME ?? `uid ${process.getuid?.() ?? 'unknown'}`;
  }
}

async function run(
  command: Exclude<Command, { kind: 'help' | 'domain-connect-public-key' | 'local-ca' }>,
  db: AdminDatabase,
  config: Config,
): Promise<string> {
  if (command.kind === 'units-stop') return stopUnits(db.sql, config, command.service);
  if (command.kind === 'users') {
    const staff = await listStaff(db.sql);
    return command.json ? JSON.stringify(staff, null, 2) : staffTable(staff);
  }
  const change = await changePermissions(db.sql, { ...command, operator: operatorName() });
  return describeChange(command.kind, command.permissions, change);
}

async function main(argv: string[]): Promise<number> {
  let command: Command;
  try {
    command = parseArgs(argv);
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    const help = argv.length === 0 ? `\n${USAGE}` : 'npm run admin -- --help shows the usage';
    process.stderr.write(`admin: ${err.message}\n${help}\n`);
    return 2;
  }
  if (command.kind === 'help') {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  let config;
  try {
    config = loadConfig();
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    process.stderr.write(`admin: ${err.message}\n`);
    return 2;
  }
  if (command.kind === 'domain-connect-public-key') {
    const { signingKey, signingKeyId } = config.domainConnect;
    if (!signingKey) {
      process.stderr.write(
        'admin: DOMAIN_CONNECT_SIGNING_KEY is not set: there is no signing key whose public half to publish\n',
      );
      return 1;
    }
    process.stdout.write(`${publicKeyZoneLines(signingKey, signingKeyId).join('\n')}\n`);
    return 0;
  }

  if (command.kind === 'local-ca') {
    try {
      process.stdout.write(await localCaCertificatePem(config));
      return 0;
    } catch (err) {
      process.stderr.write(
        `admin: cannot read the local CA in ${config.dataDir}: ${(err as Error).message}\n`,
      );
      return 1;
    }
  }

  let db: AdminDatabase | null = null;
  try {
    db = await openDatabase(config, (line) => process.stderr.write(`admin: ${line}\n`));
    process.stdout.write(`${await run(command, db, config)}\n`);
    return 0;
  } catch (err) {
    // Expected failures print their message; anything else too, but never with a stack or a password.
    let message = err instanceof Error ? err.message : String(err);
    for (const secret of db?.secrets ?? []) message = message.split(secret).join('***');
    if (config.databaseUrl) {
      const password = new URL(config.databaseUrl).password;
      for (const s of [password, decodeURIComponent(password)].filter(Boolean))
        message = message.split(s).join('***');
    }
    const code = (err as { code?: string }).code ?? '';
    const unreachable =
      /^(ECONNREFUSED|ENOTFOUND|ETIMEDOUT|EHOSTUNREACH|CONNECT_TIMEOUT|28P01|28000|3D000)$/.test(code);
    const where = config.databaseUrl
      ? `the database of DATABASE_URL (${redactUrl(config.databaseUrl)})`
      : 'the embedded database';
    const prefix = err instanceof AdminError ? '' : unreachable ? `cannot reach ${where}: ` : 'failed: ';
    process.stderr.write(`admin: ${prefix}${message}\n`);
    return 1;
  } finally {
    await db?.close().catch(() => {});
  }
}

process.exitCode = await main(process.argv.slice(2));
