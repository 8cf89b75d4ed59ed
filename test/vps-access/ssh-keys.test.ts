// The OpenSSH key lines VPS access accepts (DECISIONS.md §8 "VPS access"), against keys ssh-keygen makes
// and its own fingerprints.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseSshKey } from '../../server/src/features/vps-access/ssh-keys.js';

const dir = mkdtempSync(join(tmpdir(), 'ssh-keys-'));
let made_ = 0;
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A key made by ssh-keygen: its public line and the fingerprint ssh-keygen prints. */
function made(type: string, bits?: number): { line: string; fingerprint: string } {
  const file = join(dir, `${type}-${bits ?? 0}-${(made_ += 1)}`);
  execFileSync('ssh-keygen', [
    '-q',
    '-t',
    type,
    ...(bits ? ['-b', String(bits)] : []),
    '-N',
    '',
    '-C',
    `me@${type}`,
    '-f',
    file,
  ]);
  const line = readFileSync(`${file}.pub`, 'utf8').trim();
  const fingerprint = execFileSync('ssh-keygen', ['-l', '-E', 'sha256', '-f', `${file}.pub`], {
    encoding: 'utf8',
  }).split(' ')[1]!;
  return { line, fingerprint };
}

describe('accepted keys', () => {
  const cases: [string, { type: string; bits?: number; name: string }][] = [
    ['ed25519', { type: 'ed25519', name: 'ssh-ed25519' }],
    ['ecdsa p-256', { type: 'ecdsa', bits: 256, name: 'ecdsa-sha2-nistp256' }],
    ['ecdsa p-384', { type: 'ecdsa', bits: 384, name: 'ecdsa-sha2-nistp384' }],
    ['ecdsa p-521', { type: 'ecdsa', bits: 521, name: 'ecdsa-sha2-nistp521' }],
    ['rsa 2048', { type: 'rsa', bits: 2048, name: 'ssh-rsa' }],
  ];
  it.each(cases)('%s', (_, { type, bits, name }) => {
    const { line, fingerprint } = made(type, bits);
    const key = parseSshKey(line);
    expect(key).toEqual({
      name: `me@${type}`,
      type: name,
      fingerprint,
      public_key: line.split(' ').slice(0, 2).join(' '),
    });
    expect(parseSshKey(line, 'laptop')).toMatchObject({ name: 'laptop' });
    expect(parseSshKey(line.split(' ').slice(0, 2).join(' '))).toMatchObject({ name });
  });
});

describe('refused keys', () => {
  const ed = () => made('ed25519').line.split(' ');
  const cases: [string, { given: () => string; want: RegExp }][] = [
    [
      'rsa of 1024 bits',
      { given: () => made('rsa', 1024).line, want: /2048 bits or more \(this one has 1024\)/ },
    ],
    ['a private key', { given: () => '-----BEGIN OPENSSH PRIVATE KEY-----', want: /unsupported key type/ }],
    [
      'options before the key',
      { given: () => `command="x" ${ed().join(' ')}`, want: /unsupported key type/ },
    ],
    ['not base64', { given: () => 'ssh-ed25519 AAAA$$$', want: /not base64/ }],
    ['a type its blob does not name', { given: () => `ssh-rsa ${ed()[1]}`, want: /does not match its type/ }],
    [
      'an unknown type',
      {
        given: () => `ssh-dss ${Buffer.from('\0\0\0\x07ssh-dss').toString('base64')}`,
        want: /unsupported key type/,
      },
    ],
    [
      'a truncated blob',
      { given: () => `ssh-ed25519 ${ed()[1]!.slice(0, 40)}`, want: /does not match|not an Ed25519/ },
    ],
    ['two lines', { given: () => `${ed().join(' ')}\n${ed().join(' ')}`, want: /one line/ }],
    ['empty', { given: () => ' ', want: /one OpenSSH public key line/ }],
  ];
  it.each(cases)('%s', (_, { given, want }) => {
    const answer = parseSshKey(given());
    expect(typeof answer).toBe('string');
    expect(answer).toMatch(want);
  });
});
