// Every operation declares who may call it (`x-callers`) and what a restricted caller needs
// (`x-capability`), and the declarations agree with the capability catalogue (DECISIONS.md §3). The
// server refuses to start with an undeclared operation (http/bind.ts); this names the culprit.
import { describe, expect, it } from 'vitest';
import { operations } from '../../generated/operations.js';
import { CAPABILITIES, findCapability } from '../../server/src/authz/capabilities.js';

const KINDS = ['anonymous', 'session', 'token', 'application', 'acting_as'];
const entries = Object.values(operations).map((op) => ({
  id: op.operationId,
  path: op.path,
  security: op.security as readonly string[],
  callers: op.callers as readonly string[],
  capability: op.capability as string | null,
  capabilityFree: op.capabilityFree as boolean,
}));

describe.each(entries)('$id', (op) => {
  it('declares its callers, of known kinds', () => {
    expect(op.callers.length).toBeGreaterThan(0);
    for (const kind of op.callers) expect(KINDS).toContain(kind);
  });

  it('is anonymous exactly when it has no security, and then for everyone', () => {
    const anonymous = op.callers.includes('anonymous');
    expect(anonymous).toBe(op.security.length === 0);
    if (anonymous) expect(op.callers).toEqual(['anonymous']);
  });

  it('names a catalogue capability whenever a token, an acting-as request or (usually) an application may call it', () => {
    if (op.capability !== null) expect(findCapability(op.capability), op.capability).toBeDefined();
    if ((op.callers.includes('token') || op.callers.includes('acting_as')) && !op.capabilityFree)
      expect(op.capability).not.toBeNull();
    // Capability-free is GET /me alone (DECISIONS.md §7), never an application's.
    if (op.capabilityFree) {
      expect(op.id).toBe('meGet');
      expect(op.callers).not.toContain('application');
    }
    if (!op.callers.some((k) => ['token', 'acting_as', 'application'].includes(k))) expect(op.capability).toBeNull();
  });

  it('lets staff power through only where it belongs', () => {
    const staffOnly = op.capability !== null && findCapability(op.capability)?.systemPermission != null;
    if (op.path.startsWith('/admin/')) {
      // Staff routes: an (elevated) session, or an admin-authorized token; never an application.
      expect(op.callers.every((k) => k === 'session' || k === 'token')).toBe(true);
      expect(staffOnly).toBe(true);
    } else if (staffOnly) {
      // Outside /admin/, admin-only capabilities are applications' own (seed "Application reads").
      expect(op.callers).toEqual(['application']);
    }
    // Acting-as is never elevated and never carries staff power.
    if (op.callers.includes('acting_as')) expect(staffOnly).toBe(false);
  });
});

it('has no catalogue capability that guards nothing', () => {
  const used = new Set(entries.map((op) => op.capability));
  const unused = CAPABILITIES.map((c) => c.name).filter((name) => !used.has(name));
  expect(unused).toEqual([]);
});
