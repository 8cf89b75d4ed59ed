// Argument names say what they are (`ORG_ID`, not `id`), in usage and errors, across the whole command
// tree: derived from the route for generated commands, so routes added later are named the same way.
import { operations } from '@svcplatform/sdk/operations';
import { describe, expect, it } from 'vitest';
import { walkCommands } from '../src/completion/table.js';
import { rootCommand } from '../src/main.js';
import { argumentName, pathParameters, type CliOperation } from '../src/operation.js';

const op = (path: string) => ({ path });

describe('argumentName', () => {
  it.each([
    ['/organizations/{id}/members', 'id', 'ORG_ID'],
    ['/organizations/{id}/members/{user_id}', 'user_id', 'USER_ID'],
    ['/organizations/{organization_id}/standing', 'organization_id', 'ORG_ID'],
    ['/service-instances/{id}/operations/{operation_id}', 'id', 'SERVICE_ID'],
    ['/projects/{id}/service-instances', 'id', 'PROJECT_ID'],
    ['/admin/subscriptions/{id}/suspend', 'id', 'SUBSCRIPTION_ID'],
    ['/admin/maintenances/{id}/cancel', 'id', 'MAINTENANCE_ID'],
    ['/catalog/products/{id}', 'id', 'PRODUCT_ID'],
    ['/admin/policies/{id}', 'id', 'POLICY_ID'],
    ['/admin/addresses/{id}', 'id', 'ADDRESS_ID'],
    ['/service-instances/{id}/resources/{resource_id}/backups/{backup_id}', 'backup_id', 'BACKUP_ID'],
    ['/public/resellers/by-host/{hostname}', 'hostname', 'HOSTNAME'],
    ['/organizations/{id}/domains/{domain}/check', 'domain', 'DOMAIN'],
  ])('%s {%s} → %s', (path, name, want) => {
    expect(argumentName(op(path), { name })).toBe(want);
  });

  it('names every path parameter of the spec in capitals, never a bare ID', () => {
    for (const o of Object.values(operations as Record<string, CliOperation>)) {
      for (const p of pathParameters(o)) {
        const name = argumentName(o, p);
        expect(name, `${o.operationId} {${p.name}}`).toMatch(/^[A-Z][A-Z0-9_]*$/);
        expect(name, `${o.operationId} {${p.name}}`).not.toBe('ID');
      }
    }
  });
});

describe('the command tree', () => {
  it('every argument of every command, built-in or generated, has such a name, in its usage too', async () => {
    let seen = 0;
    for await (const c of walkCommands(rootCommand())) {
      for (const a of c.arguments) {
        seen += 1;
        expect(a.name, c.words.join(' ')).toMatch(/^[A-Z][A-Z0-9_]*$/);
        expect(a.name, c.words.join(' ')).not.toBe('ID');
      }
      // The parent's listing names them the same way: `show <ORG_ID>`, never `<id>` (an option's value,
      // `--image <image>`, and the `[options]` and `<command>` words are no arguments).
      expect(c.spec.term, c.words.join(' ')).not.toMatch(
        /(?<!--[a-z-]+ )(<(?!command>)[a-z_]+(\.\.\.)?>|\[(?!options\]|command\])[a-z_]+(\.\.\.)?\])/,
      );
    }
    expect(seen).toBeGreaterThan(80);
  });
});
