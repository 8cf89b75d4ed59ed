// The columns `-o table` shows for the lists that have too many fields to show them all, keyed by
// operationId. A list without an entry here shows every field; `-o json` and `-o yaml` always do.
import type { Column } from './table.js';

const field = (header: string, name: string): Column => ({ header, value: (row) => row[name] });
const nested = (header: string, name: string, inner: string): Column => ({
  header,
  value: (row) => {
    const value = row[name];
    return typeof value === 'object' && value !== null
      ? (value as Record<string, unknown>)[inner]
      : undefined;
  },
});

const ORGANIZATION: readonly Column[] = [
  field('ID', 'id'),
  field('SLUG', 'slug'),
  field('NAME', 'name'),
  field('ROLE', 'role'),
  field('PERSONAL', 'personal'),
  field('COUNTRY', 'billing_country_code'),
];

const MEMBER: readonly Column[] = [
  field('USER_ID', 'user_id'),
  field('NAME', 'name'),
  field('EMAIL', 'email'),
  field('ROLE', 'role'),
  field('JOINED', 'created_at'),
];

const INVITATION: readonly Column[] = [
  field('ID', 'id'),
  field('EMAIL', 'email'),
  field('ROLE', 'role'),
  field('STATUS', 'status'),
  field('EXPIRES_AT', 'expires_at'),
];

const PROJECT: readonly Column[] = [
  field('ID', 'id'),
  field('SLUG', 'slug'),
  field('NAME', 'name'),
  field('MANAGED', 'managed'),
  field('DESCRIPTION', 'description'),
];

/** `12.50 EUR, 3.00 USD`; `-` when nothing is under a live window. */
function spend(row: Record<string, unknown>): string | null {
  const entries = Array.isArray(row.cycle_spend) ? (row.cycle_spend as Record<string, unknown>[]) : [];
  if (entries.length === 0) return null;
  return entries.map((e) => `${String(e.amount)} ${String(e.currency)}`).join(', ');
}

const PROJECT_STATS: readonly Column[] = [
  field('PROJECT_ID', 'project_id'),
  field('RESOURCES', 'resource_count'),
  { header: 'CYCLE_SPEND', value: spend },
];

/** Who acted: the person, else the application; a personal API token is named after the person. */
function actor(row: Record<string, unknown>): string | null {
  const a = (row.actor ?? {}) as Record<string, unknown>;
  const who = (a.user_id ?? (a.application_id ? `app ${String(a.application_id)}` : null)) as string | null;
  if (who && typeof a.token_id === 'string') return `${who} (token)`;
  return who;
}

const AUDIT_ENTRY: readonly Column[] = [
  field('TIME', 'created_at'),
  field('ACTION', 'action'),
  { header: 'ACTOR', value: actor },
  {
    header: 'TARGET',
    value: (row) => {
      const type = nested('', 'target', 'type').value(row);
      const id = nested('', 'target', 'id').value(row);
      return id == null ? type : `${String(type)} ${String(id)}`;
    },
  },
];

const names = (value: unknown): string | undefined => (Array.isArray(value) ? value.join(', ') : undefined);

const API_TOKEN: readonly Column[] = [
  field('ID', 'id'),
  field('NAME', 'name'),
  // A legacy token (no authorization, capabilities []) acts with every non-admin capability.
  {
    header: 'CAPABILITIES',
    value: (row) => (row.authorization === null ? '(unrestricted)' : names(row.capabilities)),
  },
  { header: 'EXPIRES_AT', value: (row) => row.expires_at ?? 'never' },
  field('LAST_USED_AT', 'last_used_at'),
];

const API_TOKEN_CAPABILITY: readonly Column[] = [
  field('NAME', 'name'),
  field('ADMIN_ONLY', 'admin_only'),
  { header: 'SCOPES', value: (row) => names(row.scopes) },
  field('DESCRIPTION', 'description'),
];

const DELEGATION: readonly Column[] = [
  field('ID', 'id'),
  nested('APPLICATION', 'application', 'name'),
  { header: 'CAPABILITIES', value: (row) => names(row.capabilities) },
  field('STATUS', 'status'),
  field('LAST_USED_AT', 'last_used_at'),
];

const DOMAIN: readonly Column[] = [
  field('DOMAIN', 'domain'),
  field('STATUS', 'status'),
  field('VERIFIED_AT', 'verified_at'),
  field('LOST_SINCE', 'lost_since'),
  field('LAST_CHECKED_AT', 'last_checked_at'),
  field('LAST_ERROR', 'last_error'),
];

const CATALOG_PRODUCT: readonly Column[] = [
  field('ID', 'id'),
  field('SLUG', 'slug'),
  field('KIND', 'kind'),
  field('CPU', 'cpu'),
  field('MEMORY_MB', 'memory_mb'),
  field('STORAGE_GB', 'storage_gb'),
  {
    header: 'MONTHLY_FEE',
    value: (row) => (row.monthly_fee == null ? null : `${String(row.monthly_fee)} EUR`),
  },
  { header: 'FEATURES', value: (row) => names(row.features) },
];

const SERVICE_INSTANCE: readonly Column[] = [
  field('ID', 'id'),
  field('SLUG', 'slug'),
  field('NAME', 'name'),
  field('STATUS', 'status'),
  field('PRODUCT_ID', 'product_id'),
  field('CREATED_AT', 'created_at'),
];

/** The rows of `resources list` and `subscriptions resources`, whose answers wrap them (run-services.ts). */
export const RESOURCE_COLUMNS: readonly Column[] = [
  field('ID', 'id'),
  field('KIND', 'kind'),
  field('ROLE', 'role'),
  field('STATUS', 'status'),
  field('PRIMARY', 'is_declared_primary'),
  field('HIDDEN', 'hidden'),
  field('OS_IMAGE', 'os_image'),
  field('CREATED_AT', 'created_at'),
];

/** The rows of `backups list`, whose answer wraps them with the ceiling (run-services.ts). */
export const BACKUP_COLUMNS: readonly Column[] = [
  field('ID', 'id'),
  field('NAME', 'name'),
  field('STATUS', 'status'),
  field('RESTORE_PHASE', 'restore_phase'),
  field('SIZE_BYTES', 'size_bytes'),
  field('CREATED_AT', 'created_at'),
  field('COMPLETED_AT', 'completed_at'),
];

/** The rows of `domains connect list`, whose answer wraps them (run-services.ts). */
export const DOMAIN_CONNECT_COLUMNS: readonly Column[] = [
  field('ID', 'id'),
  field('HOSTNAME', 'hostname'),
  field('STATUS', 'status'),
  { header: 'SRV', value: (row) => `${String(row.srv_target)}:${String(row.srv_port)}` },
  field('PROVIDER', 'dns_provider_display_name'),
  field('TEMPLATE', 'template_confirmed'),
  field('LAST_VERIFIED_AT', 'last_verified_at'),
  field('LAST_ERROR', 'last_error'),
];

const SERVICE_SHARE: readonly Column[] = [
  field('USER_ID', 'user_id'),
  field('NAME', 'name'),
  field('SHARED_AT', 'created_at'),
];

const OPERATION: readonly Column[] = [
  field('ID', 'id'),
  field('KIND', 'kind'),
  field('STATUS', 'status'),
  field('PHASE', 'phase'),
  {
    header: 'PROGRESS',
    value: (row) => (row.progress_percent == null ? null : `${String(row.progress_percent)}%`),
  },
  field('CREATED_AT', 'created_at'),
  field('COMPLETED_AT', 'completed_at'),
  field('ERROR', 'error'),
];

export const TABLE_COLUMNS: Readonly<Record<string, readonly Column[]>> = {
  catalogProductList: CATALOG_PRODUCT,
  organizationList: ORGANIZATION,
  memberList: MEMBER,
  domainList: DOMAIN,
  invitationList: INVITATION,
  projectList: [...PROJECT.slice(0, 1), field('ORGANIZATION_ID', 'organization_id'), ...PROJECT.slice(1)],
  organizationProjectList: PROJECT,
  projectStatsList: PROJECT_STATS,
  organizationAuditList: AUDIT_ENTRY,
  meApiTokenList: API_TOKEN,
  meApiTokenCapabilitiesList: API_TOKEN_CAPABILITY,
  meDelegationList: DELEGATION,
  serviceInstanceList: SERVICE_INSTANCE,
  serviceShareList: SERVICE_SHARE,
  serviceOperationList: OPERATION,
};

export function tableColumns(operationId: string): readonly Column[] | undefined {
  return Object.hasOwn(TABLE_COLUMNS, operationId) ? TABLE_COLUMNS[operationId] : undefined;
}
