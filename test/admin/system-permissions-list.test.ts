// The code's list of system permissions (server/src/authz/system-permissions.ts) is the spec's
// SystemPermission enum and its request twin, in the same order.
import { readFile } from 'node:fs/promises';
import { expect, it } from 'vitest';
import { parse } from 'yaml';
import { SYSTEM_PERMISSIONS, sortPermissions } from '../../server/src/authz/system-permissions.js';

it('agrees with the spec enum SystemPermission', async () => {
  const schemas = parse(await readFile('spec/components/schemas/me.yaml', 'utf8')) as {
    SystemPermission: { enum: string[] };
  };
  expect([...SYSTEM_PERMISSIONS]).toEqual(schemas.SystemPermission.enum);
  const admin = parse(await readFile('spec/components/schemas/admin.yaml', 'utf8')) as {
    SystemPermissionRequest: { enum: string[] };
  };
  expect([...SYSTEM_PERMISSIONS]).toEqual(admin.SystemPermissionRequest.enum);
});

it('sorts a held list into the catalogue order without repeats', () => {
  expect(sortPermissions(['manage_applications', 'legacy', 'manage_users', 'manage_users'])).toEqual([
    'manage_users',
    'manage_applications',
    'legacy',
  ]);
});
