// What /etc/os-release says for an image id of the catalog, by table.
import { describe, expect, it } from 'vitest';
import { osRelease, osReleaseText, type OsRelease } from '../../server/src/substrate/local/images.js';

const cases: [string, { given: string; want: OsRelease }][] = [
  [
    'debian',
    {
      given: 'debian-12',
      want: { id: 'debian', versionId: '12', name: 'Debian GNU/Linux', prettyName: 'Debian GNU/Linux 12' },
    },
  ],
  [
    'ubuntu',
    {
      given: 'ubuntu-24.04',
      want: { id: 'ubuntu', versionId: '24.04', name: 'Ubuntu', prettyName: 'Ubuntu 24.04' },
    },
  ],
  [
    'rocky',
    {
      given: 'rocky-9',
      want: { id: 'rocky', versionId: '9', name: 'Rocky Linux', prettyName: 'Rocky Linux 9' },
    },
  ],
  [
    'windows',
    {
      given: 'windows-server-2022',
      want: {
        id: 'windows-server',
        versionId: '2022',
        name: 'Windows Server',
        prettyName: 'Windows Server 2022',
      },
    },
  ],
  [
    'no version',
    {
      given: 'alpine',
      want: { id: 'alpine', versionId: null, name: 'Alpine Linux', prettyName: 'Alpine Linux' },
    },
  ],
  [
    'unknown family',
    {
      given: 'nix.os-24.11-beta',
      want: { id: 'nix.os', versionId: '24.11-beta', name: 'Nix Os', prettyName: 'Nix Os 24.11-beta' },
    },
  ],
];

describe('osRelease', () => {
  it.each(cases)('%s', (_name, { given, want }) => expect(osRelease(given)).toEqual(want));

  it('writes the fields a real os-release has', () => {
    expect(osReleaseText('debian-12')).toBe(
      'NAME="Debian GNU/Linux"\nID=debian\nVERSION_ID="12"\nPRETTY_NAME="Debian GNU/Linux 12"\n',
    );
  });

  it.each(['Debian-12', 'debian 12', 'debian--12', '-debian', '../x', ''])('refuses %j', (id) => {
    expect(() => osRelease(id)).toThrow(/invalid image id/);
  });
});
