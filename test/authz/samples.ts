// A minimal valid request for any operation of the bundled spec, for the caller matrix: the validator
// runs before the authorization gate, so a request it refuses would answer 400 to every caller and
// prove nothing. Bodies, query strings and path parameters are sampled from the spec's own schemas
// (required properties only); what a schema cannot say (which organization, which application, a
// documented key format) comes from the fixtures, by parameter name and path, or from a short
// per-operation table below.
import { randomBytes, randomUUID } from 'node:crypto';
import type { OperationId, OperationIndexEntry } from '../../generated/operations.js';
import { bundledSpec } from '../../server/src/spec.js';

type Schema = Record<string, unknown>;

/** The PIN the staff fixture sets up; sampled for every six-digit field (sudo setup, elevate). */
export const SUDO_PIN = '246813';

/** What a request may point at; made in the test's beforeAll, or fresh for one case. */
export interface Fixtures {
  /** The caller of the user-side cases (U): owner of `organization`. */
  user: { id: string };
  /** Organization A, created by U (not personal, so members and deletion are allowed). */
  organization: { id: string; slug: string };
  /** Project P of A. */
  project: { id: string; slug: string };
  /** W: a plain member of A, target of member and staff writes; its session feeds a delegation mint. */
  member: { id: string; sessionToken: string };
  /** V: owner of organization B, in no organization of U's but B. */
  outsider: { id: string };
  /** A service provisioned in P (the service-scoped checks), with its primary resource and provisioning. */
  service: {
    id: string;
    subscriptionId: string;
    resourceId: string;
    /** Its volume, and a ready backup of it: what the backup routes are aimed at. */
    volumeResourceId: string;
    backupId: string;
    /** A schedule of the service (the schedule routes). */
    scheduleId: string;
    operationId: string;
    /** A web app in P with its SFTP account provisioned and an import: what the /sftp, /imports and /files
     * routes are aimed at (a VPS has none of them), with its volume and that import. */
    siteId: string;
    siteVolumeResourceId: string;
    importId: string;
  };
  /** A block game provisioned in P: the game, game-subdomain and domain connect routes are aimed at it (a VPS has none). */
  gameService: { id: string };
  /** An application no caller authenticates as: grants and token rotations land on it. */
  spareApplication: { id: string };
  /** U's avatar. */
  assetId: string;
  /** A provider account linked to U. */
  oauthAccount: { provider: string; providerUserId: string };
  now(): Date;
  /** New things for one destructive case, so deleting them breaks no later case. */
  fresh: {
    organization(): Promise<string>;
    project(): Promise<string>;
    /** W made a member of A again; answers W's id. */
    member(): Promise<string>;
    apiToken(): Promise<string>;
    delegation(): Promise<string>;
  };
}

/** What a path parameter stands for, read from its name and the path (the seeds' parameter names). */
export type Ref =
  | 'organization'
  | 'organization-slug'
  | 'project'
  | 'project-slug'
  | 'member'
  | 'self'
  | 'spare-application'
  | 'asset'
  | 'api-token'
  | 'delegation'
  /** Nothing of ours: a sampled value (a random uuid), which may well answer 404. */
  | 'unknown';

export function refOf(op: Pick<OperationIndexEntry, 'path'>, name: string): Ref {
  const p = op.path;
  if (name === 'organization_id' || (name === 'id' && p.startsWith('/organizations/{id}')))
    return 'organization';
  if (name === 'slug' && p.startsWith('/organizations/by-slug/')) return 'organization-slug';
  if (name === 'slug' && p.startsWith('/organizations/{id}/projects/by-slug/')) return 'project-slug';
  if (name === 'id' && p.startsWith('/projects/{id}')) return 'project';
  if (name === 'user_id' && p.startsWith('/organizations/{id}/members/')) return 'member';
  if (name === 'id' && p.startsWith('/admin/users/{id}')) return 'member';
  if (name === 'id' && p.startsWith('/applications/users/{id}')) return 'self';
  if (name === 'id' && p.startsWith('/admin/applications/{id}')) return 'spare-application';
  if (name === 'id' && /^\/(public\/)?assets\/\{id\}/.test(p)) return 'asset';
  if (name === 'token_id') return 'api-token';
  if (name === 'delegation_id') return 'delegation';
  return 'unknown';
}

/** The path parameters of an operation, with what each stands for. */
export const pathRefs = (op: OperationIndexEntry): Ref[] =>
  op.parameters.filter((p) => p.in === 'path').map((p) => refOf(op, p.name));

/** Things of organization A: a token scoped to another organization must not reach them. */
export const addressesOrganizationA = (op: OperationIndexEntry): boolean =>
  pathRefs(op).some(
    (r) => r === 'organization' || r === 'organization-slug' || r === 'project' || r === 'project-slug',
  );

/** Request fields a schema cannot describe well enough to sample, by operation. Merged over the sample. */
const BODY: Partial<Record<OperationId, (f: Fixtures) => Record<string, unknown>>> = {
  // "1 to 20 keys of the form <kind>:<path>" is prose, not schema.
  meDiscoveryMark: () => ({ keys: ['nav:home'] }),
  // A second grant replaces a delegation's scope: aim it at an application no acting-as case uses.
  meDelegationGrant: (f) => ({ application_id: f.spareApplication.id }),
  // Minting replaces the calling application's delegation of that user: W's, never U's.
  applicationDelegationMint: (f) => ({ session_token: f.member.sessionToken }),
  memberAdd: (f) => ({ user_id: f.outsider.id }),
  // The enum's first value is `owner`; no reason to hand W more than it has.
  memberUpdate: () => ({ role: 'member' }),
  applicationUsersLookup: (f) => ({ ids: [f.user.id] }),
  // A claimable host name (a sampled string is none); a second add re-reads the claim, so it may repeat.
  domainAdd: () => ({ domain: 'matrix-claim.com' }),
  // A single label under play.test needs no claim; attaching it again answers the same row.
  customDomainAttach: () => ({ hostname: 'matrix.play.test' }),
  // Provisioning into project P, a product of the embedded catalog (migration 0013) that takes no image.
  // A cron and its action's fields are checked as a whole: a sampled string is no cron.
  scheduleCreate: () => ({ name: 'matrix', cron: '0 3 * * *', action: 'start', command: null, keep: null }),
  scheduleUpdate: () => ({ name: 'matrix', cron: '0 4 * * *', action: 'start', command: null, keep: null }),
  adminSubscriptionCreate: (f) => ({
    project_id: f.project.id,
    product_id: '5c0a7a10-0000-4000-8000-000000000003',
  }),
};

const QUERY: Partial<Record<OperationId, (f: Fixtures) => Record<string, string>>> = {
  // play.test, the embedded default's parent domain (migration 0029).
  gameSubdomainAvailability: () => ({ parent_domain_id: '5c0a7a10-0000-4000-8000-0000000000d1', subdomain: 'matrix' }),
  // A file the fixture site's volume holds (written before the cases).
  fileRead: () => ({ path: '/matrix.txt' }),
  customDomainAvailability: () => ({ hostname: 'matrix.play.test' }),
  applicationUserByOauthAccount: (f) => ({
    provider: f.oauthAccount.provider,
    provider_user_id: f.oauthAccount.providerUserId,
  }),
};

let counter = 0;
const unique = (): string => `${(counter += 1).toString(36)}${randomBytes(4).toString('hex')}`;

/** Values for the spec's string patterns, which a sampler cannot invent: a new pattern fails loudly here. */
const PATTERNS: Record<string, () => string> = {
  '^[0-9]{6}$': () => SUDO_PIN,
  '^[A-Za-z]{2,8}(-[A-Za-z0-9]{1,8})*$': () => 'en',
  '^[A-Za-z]{2}$': () => 'DE',
  // An import's host: a loopback address outside the matrix app's IMPORT_ALLOWED_NETWORKS, so an allowed
  // caller's import is refused (422) and starts nothing that could change the state a refusal reads back.
  '^[A-Za-z0-9._:-]+$': () => '127.0.0.2',
  // A Minecraft player name, and a game message.
  '^[A-Za-z0-9_]{3,16}$': () => 'Matrix',
  [String.raw`^[^\x00-\x1f\x7f-\x9f\u2028\u2029]+$`]: () => `sample ${unique()}`,
  // An import's user name, password and remote directory: any text without control characters.
  [String.raw`^[^\x00-\x1f\x7f]+$`]: () => `sample-${unique()}`,
  [String.raw`^[^\x00]+$`]: () => `sample-${unique()}`,
  '^[a-z0-9]+(-[a-z0-9]+)*$': () => `m-${unique()}`,
  '^-?[0-9]+\\.[0-9]{2}$': () => '0.00',
  '^[a-z][a-z_]*(\\.[a-z][a-z_]*)+$': () => 'me.read',
  '^[a-z_]+\\.[a-z_]+$': () => 'member.added',
  '^[a-z0-9][a-z0-9._-]{0,63}$': () => 'github',
  // OAuth: a state or redirect_to (printable ASCII); the allowlist or the state store refuses it later.
  '^[\\x20-\\x7e]+$': () => `sample-${unique()}`,
  // Staff content and billing: hostnames unique per sample (a reseller's is unique platform-wide).
  [String.raw`^(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)*[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.?$`]:
    () => `m-${unique()}.example`,
  [String.raw`^(?:_platform|(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)*[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.?)$`]:
    () => `m-${unique()}.example`,
  '^#[0-9A-Fa-f]{6}$': () => '#123456',
  // A screen hold's session id (base64url); one nobody minted is simply not held.
  '^[A-Za-z0-9_-]+$': () => `session-${unique()}`,
  // A name that is not blank (a service's).
  '\\S': () => `Sample ${unique()}`,
  '^-?[0-9]{1,12}(\\.[0-9]{1,2})?$': () => '0.00',
  '^[0-9]{1,12}(\\.[0-9]{1,2})?$': () => '0.00',
};

function resolve(schema: unknown): Schema {
  let s = (schema ?? {}) as Schema;
  while (typeof s.$ref === 'string') {
    s = (s.$ref as string)
      .replace(/^#\//, '')
      .split('/')
      .reduce<Schema>((o, k) => o[k] as Schema, bundledSpec);
  }
  return s;
}

/** A value the schema accepts; `at` names where, for the error when it cannot make one. */
export function sample(schema: unknown, at: string, now: Date): unknown {
  const s = resolve(schema);
  if (Array.isArray(s.enum)) return s.enum[0];
  if ('const' in s) return s.const;
  for (const key of ['oneOf', 'anyOf'] as const) {
    const branches = s[key] as Schema[] | undefined;
    if (branches) return sample(branches.map(resolve).find((b) => b.type !== 'null') ?? branches[0], at, now);
  }
  if (Array.isArray(s.allOf)) return sample(s.allOf[0], at, now);
  const type = Array.isArray(s.type)
    ? (s.type as string[]).find((t) => t !== 'null')
    : (s.type as string | undefined);
  switch (type) {
    case 'object': {
      const properties = (s.properties ?? {}) as Record<string, unknown>;
      return Object.fromEntries(
        ((s.required ?? []) as string[]).map((name) => [
          name,
          sample(properties[name], `${at}/${name}`, now),
        ]),
      );
    }
    case 'array': {
      const n = (s.minItems as number | undefined) ?? 0;
      return Array.from({ length: n }, (_, i) => sample(s.items, `${at}/${i}`, now));
    }
    case 'integer':
    case 'number':
      return (s.minimum as number | undefined) ?? 0;
    case 'boolean':
      return false;
    case 'string':
      return sampleString(s, at, now);
    default:
      throw new Error(`cannot sample ${at}: ${JSON.stringify(s)}`);
  }
}

function sampleString(s: Schema, at: string, now: Date): string {
  switch (s.format) {
    case 'uuid':
      return randomUUID();
    case 'email':
      return `matrix-${unique()}@example.test`;
    case 'date-time':
      return new Date(now.getTime() + 86_400_000).toISOString();
    case 'binary':
      throw new Error(`${at}: binary belongs in a multipart form`);
  }
  if (typeof s.pattern === 'string') {
    const make = PATTERNS[s.pattern];
    if (!make)
      throw new Error(`cannot sample ${at}: add an example for the pattern ${s.pattern} to PATTERNS`);
    const value = make();
    if (!new RegExp(s.pattern, 'u').test(value))
      throw new Error(`${at}: "${value}" does not match ${s.pattern}`);
    return value;
  }
  // Unique, so nothing collides, and not a common password (some fields are new passwords).
  const text = `sample ${unique()} text`;
  const min = (s.minLength as number | undefined) ?? 1;
  const max = (s.maxLength as number | undefined) ?? 256;
  return text.padEnd(min, 'x').slice(0, max);
}

export interface Planned {
  method: string;
  /** The path under the API base, parameters filled in and the query appended. */
  url: string;
  body: { json: unknown } | { form: FormData } | null;
  /** A path parameter is not one of the fixtures, so a 404 may be the honest answer. */
  unknownTarget: boolean;
}

/** The spec's own operation object (parameters with schemas, the request body). */
function specOperation(op: OperationIndexEntry): Schema {
  return ((bundledSpec.paths as Record<string, Schema>)[op.path]![op.method] as Schema) ?? {};
}

/**
 * The request for one case. A DELETE of the thing its path ends in gets a fresh one (a new
 * organization, project, token, delegation, or W put back in A), so the shared fixtures outlive it.
 */
export async function plan(
  op: OperationIndexEntry,
  f: Fixtures,
  image: Uint8Array,
  /**
   * For service-scoped operations: aim at the fixture service (its id, resource and operation), or at
   * an unknown service id with the same other parameters. Default: sampled ids, as for any unknown.
   */
  service?: 'fixture' | 'unknown',
): Promise<Planned> {
  const spec = specOperation(op);
  const now = f.now();
  const parameters = ((spec.parameters ?? []) as unknown[]).map(resolve) as (Schema & {
    name: string;
    in: string;
  })[];
  let url: string = op.path;
  let unknownTarget = false;
  for (const p of parameters.filter((x) => x.in === 'path')) {
    const ref = refOf(op, p.name);
    const fresh = op.method === 'delete' && op.path.endsWith(`{${p.name}}`);
    let value: string;
    const aimed = service && op.serviceScoped ? serviceParameter(op, p.name, f, service) : null;
    if (aimed !== null) {
      url = url.replace(`{${p.name}}`, encodeURIComponent(aimed));
      continue;
    }
    switch (ref) {
      case 'organization':
        value = fresh ? await f.fresh.organization() : f.organization.id;
        break;
      case 'organization-slug':
        value = f.organization.slug;
        break;
      case 'project':
        value = fresh ? await f.fresh.project() : f.project.id;
        break;
      case 'project-slug':
        value = f.project.slug;
        break;
      case 'member':
        value = fresh ? await f.fresh.member() : f.member.id;
        break;
      case 'self':
        value = f.user.id;
        break;
      case 'spare-application':
        value = f.spareApplication.id;
        break;
      case 'asset':
        value = f.assetId;
        break;
      case 'api-token':
        value = fresh ? await f.fresh.apiToken() : randomUUID();
        unknownTarget ||= !fresh;
        break;
      case 'delegation':
        value = fresh ? await f.fresh.delegation() : randomUUID();
        unknownTarget ||= !fresh;
        break;
      case 'unknown':
        value = String(sample(p.schema, `path ${p.name}`, now));
        unknownTarget = true;
        break;
    }
    url = url.replace(`{${p.name}}`, encodeURIComponent(value));
  }
  const query: Record<string, string> = { ...QUERY[op.operationId]?.(f) };
  for (const p of parameters.filter((x) => x.in === 'query' && x.required && !(x.name in query))) {
    query[p.name] = String(sample(p.schema, `query ${p.name}`, now));
  }
  const search = new URLSearchParams(query).toString();
  if (search) url += `?${search}`;
  return { method: op.method.toUpperCase(), url, body: body(op, spec, f, now, image), unknownTarget };
}

/** A service-scoped path parameter aimed at the fixture service (or an unknown one), or null. */
function serviceParameter(
  op: OperationIndexEntry,
  name: string,
  f: Fixtures,
  service: 'fixture' | 'unknown',
): string | null {
  if (name === 'id') {
    if (service === 'unknown') return randomUUID();
    if (op.path.startsWith('/subscriptions/')) return f.service.subscriptionId;
    if (/\/(game-subdomains|game|domain-connect)(\/|$)/.test(op.path)) return f.gameService.id;
    return /\/(sftp|imports|custom-domains|resources\/\{resource_id\}\/files)(\/|$)/.test(op.path) ? f.service.siteId : f.service.id;
  }
  if (name === 'resource_id') {
    if (op.path.includes('/files')) return f.service.siteVolumeResourceId;
    return op.path.includes('/backups') ? f.service.volumeResourceId : f.service.resourceId;
  }
  if (name === 'import_id') return f.service.importId;
  if (name === 'backup_id') return f.service.backupId;
  if (name === 'schedule_id') return f.service.scheduleId;
  if (name === 'operation_id') return f.service.operationId;
  if (name === 'user_id') return f.member.id;
  return null;
}

function body(
  op: OperationIndexEntry,
  spec: Schema,
  f: Fixtures,
  now: Date,
  image: Uint8Array,
): Planned['body'] {
  if (!op.body) return null;
  const contentType: string = op.body.contentType;
  const content = resolve(spec.requestBody).content as Record<string, { schema: unknown }>;
  const schema = resolve(content[contentType]!.schema);
  if (contentType === 'multipart/form-data') {
    const form = new FormData();
    const properties = (schema.properties ?? {}) as Record<string, unknown>;
    for (const name of (schema.required ?? []) as string[]) {
      const field = resolve(properties[name]);
      if (field.format === 'binary')
        form.append(name, new Blob([new Uint8Array(image)], { type: 'image/png' }), 'matrix.png');
      else form.append(name, String(sample(field, `/${name}`, now)));
    }
    return { form };
  }
  if (contentType !== 'application/json') throw new Error(`${op.operationId}: no sampler for ${contentType}`);
  return { json: { ...(sample(schema, '', now) as object), ...BODY[op.operationId]?.(f) } };
}
