// System permissions (DECISIONS.md §3): what makes a user staff, held in users.system_permissions.
// The wire strings of the spec's SystemPermission enum (spec/components/schemas/me.yaml), in its order;
// test/admin/system-permissions-list.test.ts checks that the two agree.
export const SYSTEM_PERMISSIONS = [
  'manage_users',
  'view_all_orders',
  'manage_services',
  'manage_billing',
  'manage_public_content',
  'manage_applications',
] as const;
export type SystemPermission = (typeof SYSTEM_PERMISSIONS)[number];

export function isSystemPermission(value: string): value is SystemPermission {
  return (SYSTEM_PERMISSIONS as readonly string[]).includes(value);
}

/** The permissions in the catalogue's order, without repeats; strings outside it keep their place at the end. */
export function sortPermissions(permissions: Iterable<string>): string[] {
  const set = new Set(permissions);
  return [...SYSTEM_PERMISSIONS.filter((p) => set.has(p)), ...[...set].filter((p) => !isSystemPermission(p))];
}
