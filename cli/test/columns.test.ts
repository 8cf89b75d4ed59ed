// The columns `-o table` chooses for the organization lists (output/columns.ts).
import { describe, expect, it } from 'vitest';
import { operations } from '../../generated/operations.js';
import { TABLE_COLUMNS, tableColumns } from '../src/output/columns.js';
import { renderTable } from '../src/output/table.js';

const audit = tableColumns('organizationAuditList')!;
const stats = tableColumns('projectStatsList')!;
const cells = (columns: typeof audit, row: Record<string, unknown>) => columns.map((c) => c.value(row));

describe('table columns', () => {
  it('are keyed by operations of the index', () => {
    for (const id of Object.keys(TABLE_COLUMNS)) expect(Object.keys(operations)).toContain(id);
    expect(tableColumns('meGet')).toBeUndefined();
  });

  it.each([
    ['a person', { user_id: 'u1', token_id: null, application_id: null, acting_as_user_id: null }, 'u1'],
    [
      'a person with an API token',
      { user_id: 'u1', token_id: 't1', application_id: null, acting_as_user_id: null },
      'u1 (token)',
    ],
    [
      'an application alone',
      { user_id: null, token_id: null, application_id: 'a1', acting_as_user_id: null },
      'app a1',
    ],
    [
      'nobody (the platform)',
      { user_id: null, token_id: null, application_id: null, acting_as_user_id: null },
      null,
    ],
  ])('audit entries name the actor: %s', (_name, actor, want) => {
    const row = { created_at: 'T', action: 'x.y', actor, target: { type: 'member', id: 'm1' } };
    expect(cells(audit, row)).toEqual(['T', 'x.y', want, 'member m1']);
  });

  it('an audit target without an id is its type', () => {
    expect(cells(audit, { target: { type: 'organization', id: null } })[3]).toBe('organization');
  });

  it('project stats show the cycle spend per currency, "-" when none', () => {
    const rows = [
      { project_id: 'p1', resource_count: 2, cycle_spend: [{ currency: 'EUR', amount: '12.50' }] },
      { project_id: 'p2', resource_count: 0, cycle_spend: [] },
    ];
    expect(renderTable(rows, stats)).toBe(
      'PROJECT_ID  RESOURCES  CYCLE_SPEND\np1          2          12.50 EUR\np2          0          -\n',
    );
  });
});
