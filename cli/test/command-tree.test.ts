import { describe, expect, it } from 'vitest';
import { operations } from '../../generated/operations.js';
import { apiCommand } from '../src/commands/api-command.js';
import { configCommand } from '../src/commands/config-command.js';
import { operationOverrides } from '../src/commands/operation-overrides.js';
import { signInCommands } from '../src/commands/sign-in-commands.js';
import { BUILTIN_COMMANDS, buildCommandTree, describeGroup, treeCommands } from '../src/command-tree.js';
import type { CliOperation } from '../src/operation.js';

const index = Object.values(operations) as readonly CliOperation[];

const op = (operationId: string, cli: string[]): CliOperation => ({
  operationId,
  method: 'get',
  path: `/${cli.join('/')}`,
  summary: `${operationId} summary`,
  tags: [],
  security: [],
  capability: null,
  cli,
  parameters: [],
  body: null,
  successStatus: 200,
  responseType: 'application/json',
});

describe('the generated index', () => {
  it('gives every operation its own command words', () => {
    expect(buildCommandTree(index).conflicts).toEqual([]);
  });

  it('reserves the word of every built-in command', () => {
    const builtins = [...signInCommands, apiCommand, configCommand].map((c) => c.name);
    for (const name of builtins) expect(BUILTIN_COMMANDS).toContain(name);
  });

  it('uses no word that a built-in command owns', () => {
    const firstWords = new Set(index.map((o) => o.cli[0]));
    for (const builtin of BUILTIN_COMMANDS) expect(firstWords.has(builtin)).toBe(false);
  });
});

describe('operation overrides', () => {
  it('each names an operation of the index', () => {
    const ids = new Set(index.map((o) => o.operationId));
    for (const id of Object.keys(operationOverrides)) expect(ids).toContain(id);
  });

  it("give the organization issue's commands their words", () => {
    const words = (id: string) => index.find((o) => o.operationId === id)!.cli.join(' ');
    for (const [id, w] of [
      ['organizationList', 'orgs list'],
      ['organizationGet', 'orgs show'],
      ['organizationCreate', 'orgs create'],
      ['organizationUpdate', 'orgs update'],
      ['organizationDelete', 'orgs delete'],
      ['organizationBillingCountrySet', 'orgs billing-country'],
      ['organizationIconUpload', 'orgs icon set'],
      ['organizationIconDelete', 'orgs icon delete'],
      ['organizationStandingGet', 'orgs standing'],
      ['organizationProjectList', 'orgs projects'],
      ['memberList', 'members list'],
      ['memberAdd', 'members add'],
      ['memberUpdate', 'members update'],
      ['memberRemove', 'members remove'],
      ['projectList', 'projects list'],
      ['projectGet', 'projects show'],
      ['projectCreate', 'projects create'],
      ['projectUpdate', 'projects update'],
      ['projectDelete', 'projects delete'],
      ['projectStatsGet', 'projects stats'],
      ['organizationAuditList', 'audit list'],
    ]) {
      expect(words(id!)).toBe(w);
    }
  });

  it("give the issue's commands their words: me avatar set, discovery mark, sudo ..., sudo totp ...", () => {
    const words = (id: string) => index.find((o) => o.operationId === id)!.cli.join(' ');
    expect(words('meAvatarUpload')).toBe('me avatar set');
    expect(words('meDiscoveryMark')).toBe('discovery mark');
    for (const [id, w] of [
      ['sudoStatusGet', 'sudo status'],
      ['sudoSetup', 'sudo setup'],
      ['sudoElevate', 'sudo elevate'],
      ['sudoExit', 'sudo exit'],
      ['sudoDisable', 'sudo disable'],
      ['sudoTotpEnroll', 'sudo totp enroll'],
      ['sudoTotpVerify', 'sudo totp verify'],
    ]) {
      expect(words(id!)).toBe(w);
    }
  });

  it('give the API token, delegation and application commands their words', () => {
    const words = (id: string) => index.find((o) => o.operationId === id)!.cli.join(' ');
    for (const [id, w] of [
      ['meApiTokenList', 'tokens list'],
      ['meApiTokenCreate', 'tokens create'],
      ['meApiTokenRevoke', 'tokens revoke'],
      ['meApiTokenCapabilitiesList', 'tokens capabilities'],
      ['meDelegationList', 'delegations list'],
      ['meDelegationGrant', 'delegations grant'],
      ['meDelegationRevoke', 'delegations revoke'],
      ['applicationDelegationMint', 'applications delegations mint'],
      ['applicationUsersLookup', 'applications users lookup'],
      ['applicationUserByOauthAccount', 'applications users by-oauth-account'],
      ['applicationUserGet', 'applications users show'],
      ['adminApplicationCreate', 'admin applications create'],
      ['adminApplicationTokenRotate', 'admin applications rotate-token'],
    ]) {
      expect(words(id!)).toBe(w);
    }
    // These take their input their own way (run-tokens.ts): --grant, --capability, a secret alone on stdout.
    for (const id of [
      'meApiTokenCreate',
      'meDelegationGrant',
      'adminApplicationCreate',
      'adminApplicationTokenRotate',
    ])
      expect(Object.keys(operationOverrides)).toContain(id);
  });

  it('replace the generated command at the same words, with their own listing term', async () => {
    const { root } = buildCommandTree([op('aSet', ['a', 'set']), op('aGet', ['a', 'get'])]);
    const run = async () => undefined;
    const [group] = treeCommands(root, 'API commands:', {
      aSet: {
        term: (word) => `${word} <file>`,
        runnable: async () => ({ description: 'custom', arguments: [], options: [], run }),
      },
    });
    const [set, get] = group!.subcommands();
    expect(set!.term).toBe('set <file>');
    expect((await set!.runnable!()).description).toBe('custom');
    expect(get!.term).toBe('get');
    expect((await get!.runnable!()).description).toContain('aGet summary');
  });
});

describe('buildCommandTree', () => {
  it('reports operations that share their words, keeping the first', () => {
    const { root, conflicts } = buildCommandTree([op('aList', ['a', 'list']), op('aList2', ['a', 'list'])]);
    expect(conflicts).toEqual([{ words: 'a list', operationIds: ['aList', 'aList2'] }]);
    expect(root.children.get('a')?.children.get('list')?.operation?.operationId).toBe('aList');
  });

  it('lets a node be an operation and a group at once (auth login, auth login verify)', () => {
    const { root } = buildCommandTree([
      op('authLogin', ['auth', 'login']),
      op('authLoginVerify', ['auth', 'login', 'verify']),
    ]);
    const login = root.children.get('auth')!.children.get('login')!;
    expect(login.operation?.operationId).toBe('authLogin');
    expect([...login.children.keys()]).toEqual(['verify']);
  });
});

describe('describeGroup', () => {
  it('lists sub-words, cut to the width with a count of the rest', () => {
    const { root } = buildCommandTree(['alpha', 'bravo', 'charlie', 'delta'].map((w) => op(w, ['g', w])));
    expect(describeGroup(root.children.get('g')!)).toBe('alpha, bravo, charlie, delta');
    expect(describeGroup(root.children.get('g')!, 16)).toBe('alpha, bravo, … (2 more)');
  });

  it('leaves out the words of hidden operations', async () => {
    const { root } = buildCommandTree([op('gList', ['g', 'list']), op('gListAll', ['g', 'list-all'])]);
    const hidden = {
      gListAll: {
        hidden: true,
        runnable: async () => ({
          description: 'all',
          arguments: [],
          options: [],
          run: async () => undefined,
        }),
      },
    };
    expect(describeGroup(root.children.get('g')!, 60, hidden)).toBe('list');
    const [group] = treeCommands(root, 'API commands:', hidden);
    const [list, listAll] = group!.subcommands();
    expect([list!.hidden, listAll!.hidden]).toEqual([undefined, true]);
    // Still a command: it runs and has its help.
    expect((await listAll!.runnable!()).description).toBe('all');
  });

  it('uses the summary of a lone operation', () => {
    const { root } = buildCommandTree([op('x', ['x'])]);
    expect(describeGroup(root.children.get('x')!)).toBe('x summary');
  });
});
