// The import rules of the server, read from its source (the static import graph, type imports
// included), in the spirit of oxide console's safety.spec.ts: a rule that only a reviewer remembers
// is broken by the next change.
//
// The job queue (server/src/jobs) knows task names and payload types only. Areas import it to enqueue
// and to type their handlers; the composition root (server/src/tasks.ts) hands their handlers to the
// worker. So jobs/ must reach no area: an import from jobs/ into features/, operations/, mail/ or
// prune/ (or the root that imports them all) would make the queue and the areas one import circle again.
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { cycles, importGraph, reachable } from './import-graph.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const graph = importGraph(ROOT, ['server/src']);

const JOBS = 'server/src/jobs/';
/** What the queue may never reach, directly or through another module. */
const AREAS = [
  'server/src/features/',
  'server/src/operations/',
  'server/src/mail/',
  'server/src/prune/',
  'server/src/tasks.ts',
  'server/src/handlers.ts',
  'server/src/app.ts',
  'server/src/main.ts',
];
/** The worker opens the mail transport, a leaf of the mail area that imports no job code. */
const ALLOWED = new Set(['server/src/mail/transport.ts']);

const inArea = (file: string) => !ALLOWED.has(file) && AREAS.some((area) => file.startsWith(area));

describe('import rules', () => {
  it('reads the graph (the rules below look at something)', () => {
    expect(graph.get('server/src/jobs/worker.ts')).toContain('server/src/jobs/store.ts');
    expect(graph.get('server/src/mail/outbox.ts')).toContain('server/src/jobs/queue.ts');
    expect([...graph.keys()].filter((f) => f.startsWith(JOBS)).length).toBeGreaterThan(5);
  });

  it('the job queue reaches no area, not even through another module', () => {
    const violations: string[] = [];
    for (const file of graph.keys()) {
      if (!file.startsWith(JOBS)) continue;
      for (const [target, path] of reachable(graph, file)) {
        if (inArea(target)) violations.push(path.join(' → '));
      }
    }
    expect(violations).toEqual([]);
  });

  it('no import cycle joins the job queue and any other module', () => {
    const joined = cycles(graph).filter(
      (component) => component.some((f) => f.startsWith(JOBS)) && component.some((f) => !f.startsWith(JOBS)),
    );
    expect(joined).toEqual([]);
  });

  it('the lower floors import nothing of a feature: what both sides share lives below them', () => {
    // Issue 34: edge/control.ts took its report's type from features/external-access, authz read
    // sessions through features/auth. (dns/ and secrets/ still reach into features/: not yet moved.)
    const floors = [
      'server/src/authz/',
      'server/src/auth/',
      'server/src/edge/',
      'server/src/http/',
      'server/src/db/',
      'server/src/substrate/',
      'server/src/gateway/',
    ];
    const violations = [...graph].flatMap(([file, targets]) =>
      floors.some((f) => file.startsWith(f))
        ? targets.filter((t) => t.startsWith('server/src/features/')).map((t) => `${file} → ${t}`)
        : [],
    );
    expect(violations).toEqual([]);
  });

  it("the driver-facing file interface owns its types: it imports no driver's module", () => {
    const targets = graph.get('server/src/substrate/volume-access.ts') ?? [];
    expect(targets.filter((t) => /^server\/src\/substrate\/(local|lxd)\//.test(t))).toEqual([]);
  });

  it('server code imports no test, script or CLI code', () => {
    const violations = [...graph].flatMap(([file, targets]) =>
      targets.filter((t) => /^(test|scripts|cli)\//.test(t)).map((t) => `${file} → ${t}`),
    );
    expect(violations).toEqual([]);
  });
});
