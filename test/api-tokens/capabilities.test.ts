// GET /me/api-token-capabilities (seed document 1, "API token capability", "Personal API tokens and
// delegations"): the capabilities the caller may grant, in catalogue order. Staff see the admin-only
// ones their system permissions allow, through a session only: a token never sees staff power.
import { describe, expect, it } from 'vitest';
import { CAPABILITIES, type Capability } from '../../server/src/authz/capabilities.js';
import { outcome } from '../support/refusal.js';
import { bearer, everywhere, mint, person, tokenCount, useApp } from './support.js';

const h = useApp();

const entry = (c: Capability) => ({
  name: c.name,
  description: c.description,
  admin_only: c.systemPermission !== null,
  scopes: [...c.scopes],
});
const nonAdmin = CAPABILITIES.filter((c) => c.systemPermission === null).map(entry);

describe('GET /me/api-token-capabilities', () => {
  it('lists the non-admin catalogue, in order, for a plain user', async () => {
    const me = await person(h, 'plain');
    const list = await me.api.meApiTokenCapabilitiesList();
    expect(list).toEqual(nonAdmin);
    expect(list.every((c) => c.admin_only === false)).toBe(true);
  });

  it('adds the admin-only capabilities of the permissions staff hold, and only those', async () => {
    const staff = await person(h, 'staff', ['manage_users']);
    const list = await staff.api.meApiTokenCapabilitiesList();
    expect(list).toEqual(
      CAPABILITIES.filter((c) => c.systemPermission === null || c.systemPermission === 'manage_users').map(
        entry,
      ),
    );
    expect(list.find((c) => c.name === 'admin.users.manage')?.admin_only).toBe(true);
    expect(list.map((c) => c.name)).not.toContain('admin.applications.manage');
  });

  it('shows a token with user_api_tokens.list only the non-admin catalogue, even when its owner is staff', async () => {
    const staff = await person(h, 'staff-token', ['manage_users', 'manage_applications']);
    const { secret } = await mint(staff.api, [everywhere('user_api_tokens.list')]);
    expect(await bearer(h.app, secret).meApiTokenCapabilitiesList()).toEqual(nonAdmin);
  });

  it('refuses a token without user_api_tokens.list: 403 forbidden', async () => {
    const me = await person(h, 'no-list');
    const { secret } = await mint(me.api, [everywhere('me.read'), everywhere('organizations.read')]);
    const asToken = bearer(h.app, secret);
    expect(await outcome(asToken.meApiTokenCapabilitiesList())).toEqual([403, 'forbidden']);
    // The same capability guards the token list: refused alike, and still only the one token.
    expect(await outcome(asToken.meApiTokenList())).toEqual([403, 'forbidden']);
    expect(await tokenCount(h.app, me.id)).toBe(1);
  });
});
