import { chmodSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { credentialProfiles, readCredentials, writeCredentials } from '../src/credentials.js';
import { CliError } from '../src/errors.js';
import { tempDir } from './support/run-cli.js';

const dir = () => join(tempDir('svcctl-creds-'), 'nested', 'svcctl');
const file = (d: string) => join(d, 'credentials.yaml');
const mode = (path: string) => statSync(path).mode & 0o777;

describe('credentials.yaml', () => {
  it('is created 0600 in a 0700 directory, whatever the umask', async () => {
    const d = dir();
    const old = process.umask(0o000);
    try {
      await writeCredentials('default', { token: 'svc_pat_a' }, d);
    } finally {
      process.umask(old);
    }
    expect(mode(file(d))).toBe(0o600);
    expect(mode(d)).toBe(0o700);
    expect(parse(readFileSync(file(d), 'utf8'))).toEqual({ profiles: { default: { token: 'svc_pat_a' } } });
  });

  it('reads back per profile and keeps other profiles and fields on write', async () => {
    const d = dir();
    await writeCredentials(
      'a',
      { token: 't-a', refresh_token: 'svc_rt_1', session_id: '7c2f0d4e-1b2a-4c3d-8e9f-000000000001' },
      d,
    );
    await writeCredentials('b', { token: 't-b' }, d);
    expect(await readCredentials('a', d)).toEqual({
      token: 't-a',
      refresh_token: 'svc_rt_1',
      session_id: '7c2f0d4e-1b2a-4c3d-8e9f-000000000001',
    });
    expect(await readCredentials('b', d)).toEqual({ token: 't-b' });
    expect(await readCredentials('c', d)).toBeUndefined();
    expect(await credentialProfiles(d)).toEqual(['a', 'b']);
  });

  it('forgets a profile with null', async () => {
    const d = dir();
    await writeCredentials('a', { token: 't-a' }, d);
    await writeCredentials('b', { token: 't-b' }, d);
    await writeCredentials('a', null, d);
    expect(await readCredentials('a', d)).toBeUndefined();
    expect(await credentialProfiles(d)).toEqual(['b']);
  });

  it('tightens a looser file when reading it', async () => {
    const d = dir();
    await writeCredentials('a', { token: 't-a' }, d);
    chmodSync(file(d), 0o644);
    expect(await readCredentials('a', d)).toEqual({ token: 't-a' });
    expect(mode(file(d))).toBe(0o600);
  });

  it('keeps 0600 when rewriting a file that had been loosened', async () => {
    const d = dir();
    await writeCredentials('a', { token: 't-a' }, d);
    chmodSync(file(d), 0o666);
    await writeCredentials('a', { token: 't-b' }, d);
    expect(mode(file(d))).toBe(0o600);
  });

  it('answers undefined when there is no file', async () => {
    expect(await readCredentials('default', dir())).toBeUndefined();
  });

  it('refuses a file that is not a mapping of profiles', async () => {
    const d = dir();
    await writeCredentials('a', { token: 't' }, d);
    writeFileSync(file(d), 'profiles: [1, 2]\n');
    await expect(readCredentials('a', d)).rejects.toThrow(CliError);
  });
});
