// What the operator command prints.
import type { PermissionChange, StaffMember } from './staff.js';

export function describeChange(
  kind: 'grant' | 'revoke',
  requested: string[],
  change: PermissionChange,
): string {
  const holds = change.holds.length > 0 ? change.holds.join(', ') : 'no system permissions';
  if (change.changed.length === 0) {
    const what = requested.join(', ');
    return kind === 'grant'
      ? `${change.email} already holds ${what}: nothing changed (holds: ${holds})`
      : `${change.email} does not hold ${what}: nothing changed (holds: ${holds})`;
  }
  return kind === 'grant'
    ? `granted ${change.changed.join(', ')} to ${change.email} (holds: ${holds})`
    : `revoked ${change.changed.join(', ')} from ${change.email} (holds: ${holds})`;
}

export function staffTable(staff: StaffMember[]): string {
  if (staff.length === 0)
    return 'no staff: nobody holds a system permission (npm run admin -- grant --email E --permission all)';
  const rows = [
    ['EMAIL', 'NAME', 'PERMISSIONS'],
    ...staff.map((s) => [s.email, s.name, s.permissions.join(', ')]),
  ];
  const widths = [0, 1].map((c) => Math.max(...rows.map((r) => r[c]!.length)));
  const lines = rows.map((r) =>
    `${r[0]!.padEnd(widths[0]!)}  ${r[1]!.padEnd(widths[1]!)}  ${r[2]}`.trimEnd(),
  );
  return `${lines.join('\n')}\n${staff.length} staff member${staff.length === 1 ? '' : 's'}`;
}
