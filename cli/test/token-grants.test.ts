// `--grant CAPABILITY[:SCOPE]` of `svcctl tokens create` (token-grants.ts): the spellings taken and
// those refused before anything is sent.
import { describe, expect, it } from 'vitest';
import { accumulateGrant, formatGrant, parseGrant } from '../src/token-grants.js';

const ORG = '0b6c3f9e-2d41-4a57-9c1e-7f8a9b0c1d2e';
const PROJECT = 'A1B2C3D4-E5F6-4789-8ABC-DEF012345678';

describe('parseGrant', () => {
  it.each([
    [
      'a capability alone is scope all',
      { given: 'me.read', want: { capability: 'me.read', scope: { kind: 'all' } } },
    ],
    [
      ':all spelled out',
      { given: 'projects.read:all', want: { capability: 'projects.read', scope: { kind: 'all' } } },
    ],
    [
      'one organization',
      {
        given: `projects.read:organization=${ORG}`,
        want: { capability: 'projects.read', scope: { kind: 'organization', id: ORG } },
      },
    ],
    [
      'org= for short',
      {
        given: `audit.read:org=${ORG}`,
        want: { capability: 'audit.read', scope: { kind: 'organization', id: ORG } },
      },
    ],
    [
      'one project, its id as given (the server compares ids without case)',
      {
        given: `projects.manage:project=${PROJECT}`,
        want: { capability: 'projects.manage', scope: { kind: 'project', id: PROJECT } },
      },
    ],
    [
      'white space around the parts',
      {
        given: ` orders.manage : project = ${PROJECT} `,
        want: { capability: 'orders.manage', scope: { kind: 'project', id: PROJECT } },
      },
    ],
    // The server names unknown capabilities (with the grant's index); the spelling is all that is checked here.
    ['an unknown capability', { given: 'no.such', want: { capability: 'no.such', scope: { kind: 'all' } } }],
  ] as const)('%s', (_name, { given, want }) => {
    expect(parseGrant(given)).toEqual(want);
  });

  it.each([
    ['no capability', ':all', 'the capability is missing'],
    ['nothing at all', '', 'the capability is missing'],
    ['a space inside the capability', 'me read', 'a capability has no spaces'],
    ['an unknown scope kind', `me.read:team=${ORG}`, 'the scope "team='],
    [
      'a kind without an id',
      'me.read:project',
      'the scope "project" is not all, organization=ID or project=ID',
    ],
    ['an empty id', 'me.read:project=', `project= takes the project's id (a uuid); got ""`],
    [
      'an id that is not a uuid',
      'me.read:organization=acme',
      `organization= takes the organization's id (a uuid); got "acme"`,
    ],
    ['all with an id', `me.read:all=${ORG}`, 'is not all, organization=ID or project=ID'],
  ])('refuses %s', (_name, given, message) => {
    expect(() => parseGrant(given)).toThrow(message);
  });
});

describe('accumulateGrant', () => {
  it('adds each --grant after those before it', () => {
    const first = accumulateGrant('me.read', undefined);
    expect(accumulateGrant(`projects.read:project=${PROJECT}`, first)).toEqual([
      { capability: 'me.read', scope: { kind: 'all' } },
      { capability: 'projects.read', scope: { kind: 'project', id: PROJECT } },
    ]);
  });
});

describe('formatGrant', () => {
  it.each([
    ['scope all as the capability alone', { capability: 'me.read', scope: { kind: 'all' } }, 'me.read'],
    [
      'a scoped grant as it is typed',
      { capability: 'projects.read', scope: { kind: 'organization', id: ORG } },
      `projects.read:organization=${ORG}`,
    ],
  ])('%s', (_name, grant, want) => {
    expect(formatGrant(grant)).toBe(want);
    expect(parseGrant(want)).toEqual(grant);
  });
});
