// The caller matrix's rules, read from the operation index alone (`x-callers`, `x-capability`, the
// path): which callers each operation is tried with, and what each must get. Only the step-up list
// below names operations, so operations later issues add get their rows without new test code.
import type { OperationIndexEntry } from '../../generated/operations.js';
import { CAPABILITIES, findCapability } from '../../server/src/authz/capabilities.js';
import { unauthenticated } from '../../server/src/http/authenticate.js';
import type { Sql } from '../../server/src/db/client.js';
import { addressesOrganizationA } from './samples.js';

export type CallerKey =
  | 'none'
  | 'session'
  | 'session-not-elevated'
  | 'session-not-staff'
  | 'session-not-staff-elevated'
  | 'token-without'
  | 'token-with'
  | 'token-scoped-elsewhere'
  | 'application'
  | 'application-without'
  | 'acting-as'
  | 'acting-as-without';

export interface Caller {
  key: CallerKey;
  label: string;
  /** The credential kind the gate sees; null: no credential at all. */
  kind: 'session' | 'token' | 'application' | 'acting_as' | null;
  elevated?: boolean;
  /** The capabilities the credential carries. */
  holds: ReadonlySet<string>;
  /** A token whose grant of the capability is scoped to organization B, not to A. */
  scopedElsewhere?: boolean;
  /** A session of an account holding no system permission (U), on a staff route. */
  notStaff?: boolean;
}

export type Expected = { allowed: true } | { allowed: false; status: number; code: string };

const adminOnly = (capability: string | null): boolean =>
  !!capability && !!findCapability(capability)?.systemPermission;

/** The one capability a "without" credential holds: any but the operation's. */
export const otherThan = (capability: string | null): string =>
  capability === 'me.read' ? 'me.manage' : 'me.read';

/** What the "without" token of a capability-free operation holds: anything but me.read. */
export const UNRELATED = 'me.manage';

/** Every capability, as an application may hold them; a delegation never holds staff power. */
export const EVERY_CAPABILITY = CAPABILITIES.map((c) => c.name);
export const EVERY_DELEGABLE = CAPABILITIES.filter((c) => c.systemPermission === null).map((c) => c.name);

/** Staff operations are called by the staff fixture S, everything else by U. */
export const isStaffOperation = (op: OperationIndexEntry): boolean =>
  op.path.startsWith('/admin/') || adminOnly(op.capability);

/**
 * Operations whose own rule asks a session to step up once the account has an elevation method
 * (document 1, "Sudo": adding, replacing or removing one needs an elevated session): their session
 * row is elevated. The gate itself asks elevation only under /admin/, which every other row checks.
 */
const STEP_UP = new Set<string>([
  'sudoSetup',
  'sudoDisable',
  'sudoTotpEnrollOptions',
  'sudoTotpEnroll',
  'sudoWebauthnRegisterOptions',
  'sudoWebauthnRegister',
]);

/** The callers an operation is tried with. */
export function callersOf(op: OperationIndexEntry): Caller[] {
  const cap = op.capability;
  const callers = op.callers as readonly string[];
  const only = (name: string) => new Set([name]);
  const list: Caller[] = [
    { key: 'none', label: 'no credential', kind: null, holds: new Set() },
    op.path.startsWith('/admin/')
      ? { key: 'session', label: 'elevated staff session', kind: 'session', elevated: true, holds: new Set() }
      : STEP_UP.has(op.operationId)
        ? {
            key: 'session',
            label: 'elevated session (the operation asks a step-up)',
            kind: 'session',
            elevated: true,
            holds: new Set(),
          }
        : { key: 'session', label: 'full session', kind: 'session', elevated: false, holds: new Set() },
  ];
  if (op.path.startsWith('/admin/')) {
    list.push(
      { key: 'session-not-elevated', label: 'staff session, not elevated', kind: 'session', elevated: false, holds: new Set() },
      // DECISIONS.md §4: an account that is no staff learns it lacks the permission, elevated or not.
      { key: 'session-not-staff', label: 'session of a non-staff account', kind: 'session', elevated: false, notStaff: true, holds: new Set() },
      {
        key: 'session-not-staff-elevated',
        label: 'elevated session of a non-staff account',
        kind: 'session',
        elevated: true,
        notStaff: true,
        holds: new Set(),
      },
    );
  }
  if (cap || op.capabilityFree)
    list.push({
      key: 'token-without',
      label: cap ? `API token without ${cap}` : `API token with an unrelated capability (${UNRELATED})`,
      kind: 'token',
      holds: only(cap ? otherThan(cap) : UNRELATED),
    });
  list.push({
    key: 'token-with',
    label: cap ? `API token with ${cap}` : `API token (with ${otherThan(cap)})`,
    kind: 'token',
    holds: only(cap ?? otherThan(cap)),
  });
  if (cap && findCapability(cap)?.scopes.includes('organization') && addressesOrganizationA(op)) {
    list.push({
      key: 'token-scoped-elsewhere',
      label: `API token with ${cap} scoped to another organization`,
      kind: 'token',
      holds: only(cap),
      scopedElsewhere: true,
    });
  }
  list.push({
    key: 'application',
    label: 'application with every capability',
    kind: 'application',
    holds: new Set(EVERY_CAPABILITY),
  });
  if (cap && callers.includes('application')) {
    list.push({
      key: 'application-without',
      label: `application without ${cap}`,
      kind: 'application',
      holds: only(otherThan(cap)),
    });
  }
  list.push({
    key: 'acting-as',
    label: 'application acting as the user',
    kind: 'acting_as',
    holds: new Set(EVERY_DELEGABLE),
  });
  if (cap && callers.includes('acting_as')) {
    list.push({
      key: 'acting-as-without',
      label: `acting as the user without ${cap}`,
      kind: 'acting_as',
      holds: only(otherThan(cap)),
    });
  }
  return list;
}

/**
 * What the declarations promise for one caller. An operation with no capability has nothing a token
 * or a delegation could be granted, so only an application (which needs none) passes without one.
 */
export function expectedFor(op: OperationIndexEntry, caller: Caller): Expected {
  const refuse = (status: number, code: string): Expected => ({ allowed: false, status, code });
  const callers = op.callers as readonly string[];
  if (callers.includes('anonymous')) return { allowed: true };
  if (caller.kind === null) return refuse(401, 'unauthenticated');
  // Service-scoped operations answer every refusal as an unknown id (seed 001 §5).
  const forbidden = op.serviceScoped ? refuse(404, 'not-found') : refuse(403, 'forbidden');
  if (!callers.includes(caller.kind)) return forbidden;
  if (caller.kind === 'session') {
    if (op.path.startsWith('/admin/')) {
      if (caller.notStaff) return refuse(403, 'forbidden');
      if (!caller.elevated) return refuse(403, 'elevation-required');
    }
    return { allowed: true };
  }
  // GET /me: any token or delegation, whatever it holds (DECISIONS.md §7).
  if (op.capabilityFree && caller.kind !== 'application') return { allowed: true };
  const holds = op.capability === null ? caller.kind === 'application' : caller.holds.has(op.capability);
  if (!holds) return forbidden;
  // Out of reach answers exactly as unknown (document 1, "Personal API tokens and delegations").
  if (caller.scopedElsewhere) return refuse(404, 'not-found');
  return { allowed: true };
}

export const describeExpected = (e: Expected): string => (e.allowed ? 'allowed' : `${e.status} ${e.code}`);

export interface Answer {
  status: number;
  code: string | null;
  detail: string | null;
}

/** The gate's own 401 detail: an anonymous operation's handler may refuse a credential in its body. */
const GATE_UNAUTHENTICATED = unauthenticated().detail;

/**
 * Why an answer is not what "allowed" means, or [] when it is: the caller got past the gate (no 401,
 * no 403, whichever layer refused), the sample was valid (else the gate never ran), nothing broke,
 * and a fixture it named was not hidden from it (GETs of fixtures succeed).
 */
export function notAllowed(op: OperationIndexEntry, unknownTarget: boolean, a: Answer): string[] {
  const anonymous = (op.callers as readonly string[]).includes('anonymous');
  const problems: string[] = [];
  if (a.status >= 500) problems.push('the server failed');
  if (a.code === 'invalid-request') problems.push('the sampled request is not valid (fix samples.ts)');
  if (a.status === 403) problems.push('refused');
  if (a.status === 401 && a.code === 'unauthenticated' && (!anonymous || a.detail === GATE_UNAUTHENTICATED)) {
    problems.push('refused as unauthenticated');
  }
  if (!unknownTarget && !anonymous && a.status === 404) problems.push('a fixture was hidden');
  if (!unknownTarget && op.method === 'get' && !(a.status >= 200 && a.status < 300))
    problems.push('a GET of fixtures failed');
  return problems.map((p) => `${p}: ${a.status} ${a.code ?? ''} ${a.detail ?? ''}`);
}

/** Tables a refused request may still write: rate-limit counters count attempts, refused or not. */
const SKIPPED_TABLES = new Set(['rate_limit_buckets', 'schema_migrations']);
/**
 * Columns that move without a request's say: last use is recorded when a credential is resolved,
 * before the gate decides; the mailer delivers and erases in the background.
 */
const VOLATILE_COLUMNS: Record<string, string[]> = {
  '*': ['last_used_at'],
  mail_outbox: [
    'next_attempt_at',
    'attempts',
    'sent_at',
    'given_up_at',
    'last_error',
    'text_body',
    'html_body',
    'code',
  ],
};

/** A digest per table of everything a request could have changed, for "a refusal changes nothing". */
export async function stateReader(sql: Sql): Promise<() => Promise<Record<string, string>>> {
  const tables = await sql<{ name: string }[]>`
    select table_name as name from information_schema.tables
    where table_schema = 'public' and table_type = 'BASE TABLE' order by table_name`;
  const query = tables
    .filter((t) => !SKIPPED_TABLES.has(t.name))
    .map((t) => {
      const row = `(to_jsonb(x)${[...VOLATILE_COLUMNS['*']!, ...(VOLATILE_COLUMNS[t.name] ?? [])].map((c) => ` - '${c}'`).join('')})::text`;
      return `select '${t.name}' as name, md5(coalesce(string_agg(${row}, ',' order by ${row}), '')) as digest from "${t.name}" x`;
    })
    .join(' union all ');
  return async () => {
    // An allowed case may have started an operation (provisioning) that still writes: read once it ended.
    for (const deadline = Date.now() + 30_000; ; ) {
      const [busy] = await sql`select 1 from service_operations where status in ('queued', 'running') limit 1`;
      if (!busy) break;
      if (Date.now() > deadline) throw new Error('an operation is still running after 30 s');
      await new Promise((r) => setTimeout(r, 50));
    }
    const rows = await sql.unsafe<{ name: string; digest: string }[]>(query);
    return Object.fromEntries(rows.map((r) => [r.name, r.digest]));
  };
}
