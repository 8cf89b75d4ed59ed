// svcctl domains list | add | check against the real server, whose checks query a real DNS server on
// loopback: the claim in json, the record to publish in table mode, a check that verifies it, and the
// exit codes of refusals.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../../test/support/app.js';
import { newAccount } from '../../../test/support/auth.js';
import { startTestDns, type TestDns } from '../../../test/support/dns.js';
import { startTestSmtp, type TestSmtp } from '../../../test/support/smtp.js';
import { writeCredentials } from '../../src/credentials.js';
import { ExitCode } from '../../src/exit-codes.js';
import { ensureBuilt } from '../support/build.js';
import { runCli, tempHome, type CliRun } from '../support/run-cli.js';

let app: TestApp;
let smtp: TestSmtp;
let dns: TestDns;

beforeAll(async () => {
  ensureBuilt();
  smtp = await startTestSmtp();
  dns = await startTestDns();
  app = await startTestApp({
    env: {
      SMTP_URL: smtp.url,
      SOURCE_RATE_LIMIT_SCALE: '1000',
      DNS_SERVERS: dns.server,
      DNS_TIMEOUT_MS: '300',
    },
  });
}, 180_000);
afterAll(async () => {
  await app?.close();
  await dns?.close();
  await smtp?.close();
});

type Home = ReturnType<typeof tempHome>;
interface Claim {
  domain: string;
  record_name: string;
  record_type: string;
  record_value: string;
  status: string;
  first_verified_at: string | null;
  last_error: string | null;
}

const svcctl = (home: Home, args: string[], run: CliRun = {}) =>
  runCli(args, { ...run, env: { ...home, SVCCTL_BASE_URL: app.baseUrl, ...run.env } });
const unique = (prefix: string) => `${prefix}-${Date.now().toString(36)}${Math.floor(Math.random() * 1e4)}`;

async function ok<T>(home: Home, args: string[]): Promise<T> {
  const r = await svcctl(home, args);
  expect(r.stderr, args.join(' ')).toBe('');
  expect(r.code, args.join(' ')).toBe(0);
  return JSON.parse(r.stdout) as T;
}

async function signedIn(tag: string): Promise<Home> {
  const { session } = await newAccount(app, smtp, tag);
  const home = tempHome();
  await writeCredentials(
    'default',
    { token: session.token, refresh_token: session.refresh_token, session_id: session.session_id },
    home.SVCCTL_CONFIG_DIR,
  );
  return home;
}

describe('svcctl domains', () => {
  it('add prints the claim (the record to publish set apart in a table), check verifies it, list shows it', async () => {
    const home = await signedIn('domains');
    const org = (await ok<{ id: string }>(home, ['orgs', 'create', '--name', 'DNS', '--slug', unique('dns')]))
      .id;
    const domain = `${unique('cli')}.com`;

    const claim = await ok<Claim>(home, ['domains', 'add', org, '--domain', domain.toUpperCase()]);
    expect(claim).toMatchObject({
      domain,
      record_name: `_svc-challenge.${domain}`,
      record_type: 'TXT',
      status: 'pending',
    });

    // Claiming again re-reads it; in a table, the record to publish comes after the claim.
    const table = await svcctl(home, ['domains', 'add', org, '--domain', domain, '-o', 'table']);
    expect(table.code).toBe(0);
    expect(table.stdout).toMatch(new RegExp(`^domain: +${domain.replace(/\./g, '\\.')}$`, 'm'));
    expect(table.stdout).toMatch(/^status: +pending$/m);
    expect(table.stdout).toContain(
      [
        `To prove it, publish this DNS record, then run: svcctl domains check ${org} ${domain}`,
        `  NAME   _svc-challenge.${domain}`,
        '  TYPE   TXT',
        `  VALUE  ${claim.record_value}`,
      ].join('\n'),
    );
    // -o yaml and json print the claim alone.
    expect(
      (await svcctl(home, ['domains', 'add', org, '--domain', domain, '-o', 'yaml'])).stdout,
    ).not.toContain('To prove it');

    // A check that finds no proof prints the claim and exits 10, saying why on stderr.
    const failedRun = await svcctl(home, ['domains', 'check', org, domain]);
    expect(failedRun.code).toBe(ExitCode.checkFailed);
    const failed = JSON.parse(failedRun.stdout) as Claim;
    expect(failed).toMatchObject({
      status: 'failed',
      last_error: `No TXT record with the expected value at _svc-challenge.${domain}.`,
    });
    expect(failedRun.stderr).toBe(
      `error: ${domain} is not verified (status failed): No TXT record with the expected value at _svc-challenge.${domain}.\n`,
    );
    const failedTable = await svcctl(home, ['domains', 'check', org, domain, '-o', 'table']);
    expect(failedTable.code).toBe(ExitCode.checkFailed);
    expect(failedTable.stdout).toContain('To prove it, publish this DNS record');

    dns.setTxt(claim.record_name, claim.record_value);
    const verified = await ok<Claim>(home, ['domains', 'check', org, `${domain}.`]);
    expect(verified).toMatchObject({
      status: 'verified',
      last_error: null,
      first_verified_at: expect.any(String),
    });
    const verifiedTable = await svcctl(home, ['domains', 'check', org, domain, '-o', 'table']);
    expect(verifiedTable.code).toBe(0);
    expect(verifiedTable.stdout).toMatch(/^status: +verified$/m);
    expect(verifiedTable.stdout).not.toContain('To prove it');

    expect(await ok<Claim[]>(home, ['domains', 'list', org])).toEqual([
      expect.objectContaining({ domain, status: 'verified' }),
    ]);
    const list = (await svcctl(home, ['domains', 'list', org, '-o', 'table'])).stdout.split('\n');
    expect(list[0]).toMatch(/^DOMAIN +STATUS +VERIFIED_AT +LOST_SINCE +LAST_CHECKED_AT +LAST_ERROR$/);
    expect(list[1]).toMatch(new RegExp(`^${domain.replace(/\./g, '\\.')} +verified +\\S+Z +- +\\S+Z +-$`));
  }, 120_000);

  it('exits 5 for a name that cannot be claimed and 3 for a domain not claimed, with the code on stderr', async () => {
    const home = await signedIn('domains-refused');
    const org = (await ok<{ id: string }>(home, ['orgs', 'create', '--name', 'DNS', '--slug', unique('dns')]))
      .id;
    const suffix = await svcctl(home, ['domains', 'add', org, '--domain', 'co.uk']);
    expect(suffix.code).toBe(ExitCode.invalid);
    expect(suffix.stderr).toMatch(/^ {2}code: +invalid-field-value$/m);
    expect(suffix.stderr).toContain('public suffix');
    const missing = await svcctl(home, ['domains', 'check', org, `${unique('none')}.com`]);
    expect(missing.code).toBe(ExitCode.notFound);
    expect(missing.stderr).toMatch(/^ {2}code: +not-found$/m);
    expect(await ok<Claim[]>(home, ['domains', 'list', org])).toEqual([]);
  });
});
