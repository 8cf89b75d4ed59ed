// Configuration from the environment (DECISIONS.md §5). Every variable has a default that serves one
// machine; a bad value stops the start with a message naming every problem at once.
import { resolve } from 'node:path';
import { createPrivateKey, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';

export const CAPABILITY_NAMES = [
  'container_registry',
  'domain_connect',
  'mail',
  'card_checkout',
  'crypto_checkout',
  'object_storage_buckets',
  'wallet_checkout',
  'unit_log_store',
  'unit_metrics_store',
  'edge_protection',
  'web_push',
] as const;
export type CapabilityName = (typeof CAPABILITY_NAMES)[number];

export const LOG_FORMATS = ['json', 'pretty'] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];

export interface LxdConfig {
  /** LXD_URL: `unix:/var/lib/lxd/unix.socket` (default) or `https://HOST:8443`. */
  url: string;
  /** LXD_CLIENT_CERT, LXD_CLIENT_KEY: PEM files of a client certificate the cluster trusts (HTTPS). */
  certFile: string | null;
  keyFile: string | null;
  /** LXD_PROJECT (default `default`). */
  project: string;
  /** LXD_POOL: the storage pool of volumes (default `default`; the `dir` driver, README). */
  pool: string;
  /** LXD_TARGET: the member new volumes and units go to; unset, spread over the online members (lxd/placement.ts). */
  target: string | null;
  /** LXD_SERVER_CERT: PEM file of the cluster's certificate, trusted for HTTPS in place of public CAs. */
  serverCertFile: string | null;
  /** LXD_VOLUME_ACCESS: `auto` (default), `host` or `instance` (lxd/driver.ts volumeAccess). */
  volumeAccess: 'auto' | 'host' | 'instance';
}

export interface Config {
  host: string;
  port: number;
  gatewayPort: number;
  /** GATEWAY_PUBLIC_URL: where ticket URLs point (default http://{HOST}:{GATEWAY_PORT}), without a trailing slash. */
  gatewayPublicUrl: string;
  /** SHELL_IDLE_SECONDS (default 900) and SHELL_MAX_SECONDS (default 28800): the gateway's shell lengths. */
  shellIdleSeconds: number;
  shellMaxSeconds: number;
  /** GATEWAY_MAX_CONNECTIONS_PER_USER / _PER_RESOURCE: open sockets one gateway accepts (defaults 32, 256). */
  gatewayMaxConnectionsPerUser: number;
  gatewayMaxConnectionsPerResource: number;
  /** SFTP_PORT (default 2022): the gateway's SFTP server, on HOST; 0 picks a free port (tests). */
  sftpPort: number;
  /** SFTP_PUBLIC_HOST (default HOST): the host the SFTP account answers for clients to connect to. */
  sftpPublicHost: string;
  publicBaseUrl: string;
  databaseUrl: string | null;
  dataDir: string;
  smtpUrl: string | null;
  dnsServers: string[];
  /** DNS_TIMEOUT_MS: the longest one domain check waits for the DNS servers, retries and CNAME hops included. */
  dnsTimeoutMs: number;
  /**
   * IMPORT_ALLOWED_NETWORKS: CIDRs an import may reach although private, loopback or link-local (tests;
   * default none). Parsed and checked at start.
   */
  importAllowedNetworks: Network[];
  /** Domain Connect, the service-provider side (features/domain-connect/). */
  domainConnect: DomainConnectConfig;
  /**
   * DB_TIMEOUT_MS: the longest a request waits on the database (connecting, a free connection, an
   * answer) before it answers 503 `service-unavailable` (DECISIONS.md §2).
   */
  dbTimeoutMs: number;
  sourceRateLimitScale: number;
  /** Deployment capabilities switched on (CAPABILITIES, comma-separated names). */
  capabilities: Record<CapabilityName, boolean>;
  platformDomain: string;
  /** Express `trust proxy`: how many proxy hops may set X-Forwarded-For. 0 trusts none. */
  trustProxyHops: number;
  /** Origins that emailed links may point at (ALLOWED_ORIGINS, comma-separated). */
  allowedOrigins: string[];
  /** Where emailed links point when no origin is given (DASHBOARD_URL, default PUBLIC_BASE_URL). */
  dashboardUrl: string;
  /** A refresh token unused this long expires (REFRESH_IDLE_TTL_SECONDS, default 7 days). */
  refreshIdleTtlSeconds: number;
  /** WORKER: whether the API process runs the job worker (on) or leaves jobs to `npm run worker` (off). */
  worker: boolean;
  /**
   * SUBSTRATE: the hosting substrate driver (SUBSTRATE.md): `local` (this machine), `lxd` (an LXD or
   * Incus cluster) or `kubernetes`.
   */
  substrate: 'local' | 'lxd' | 'kubernetes';
  /** The LXD cluster of SUBSTRATE=lxd. */
  lxd: LxdConfig;
  /** Validate every response against the spec (development and tests). */
  validateResponses: boolean;
  environment: 'development' | 'production' | 'test';
  logLevel: string;
  /** LOG_FORMAT: `json` or `pretty` log lines on stdout; null chooses by the terminal (http/log-format.ts). */
  logFormat: LogFormat | null;
  /** ENCRYPTION_KEY: base64 32-byte keys, comma-separated; the first seals, all open. Empty: the key file. */
  encryptionKeys: Buffer[];
  /** ELEVATION_METHODS: the elevation methods this deployment offers (default all three). */
  elevationMethods: ElevationMethodName[];
  /** PLATFORM_NAME: how the platform names itself (authenticator apps, passkey prompts). */
  platformName: string;
  /** WebAuthn relying party: id (WEBAUTHN_RP_ID, default the host of PUBLIC_BASE_URL) and accepted origins. */
  webauthn: { rpId: string; rpName: string; origins: string[] };
  /** OAUTH_PROVIDERS: OpenID providers, discovered from their issuer (features/oauth/). */
  oauthProviders: OAuthProviderConfig[];
  /** OAUTH_REDIRECT_ALLOWLIST: the exact URLs an OAuth flow may send the browser back to. */
  oauthRedirectAllowlist: string[];
  /** PORT_POOL: the external ports allocations are given from (inclusive; default 20000-20999). */
  portPool: { from: number; to: number };
  /** FIREWALL_RECONCILE_SECONDS: the longest a firewall change takes to reach the edge (default 60). */
  firewallReconcileSeconds: number;
  /** GATEWAY: whether `npm start` runs the edge gateway as its child process (on) or leaves it to `npm run gateway`. */
  gateway: boolean;
  /** EDGE: whether `npm start` runs the local edge as its child process (on) or leaves it to `npm run edge`. */
  edge: boolean;
  /** EDGE_ID: the name this edge reports what it applied under (default `local-{HOST}`). */
  edgeId: string;
  /** DNS_PORT: the platform's authoritative DNS server, UDP and TCP on HOST (default 5353). */
  dnsPort: number;
  /** PLATFORM_DNS: whether `npm start` runs the platform DNS server as its child process (on) or leaves it to `npm run dns`. */
  platformDns: boolean;
  /**
   * INGRESS_HTTP_PORT (default 8088) and INGRESS_HTTPS_PORT (default 8443): the edge's HTTP ingress on
   * HOST; 0 picks a free port, `off` (null) runs no such listener. Both off: no HTTP ingress at all.
   */
  ingressHttpPort: number | null;
  ingressHttpsPort: number | null;
  /** ACME_DIRECTORY_URL: the ACME CA custom domains' certificates come from; null: the local CA in DATA_DIR. */
  acmeDirectoryUrl: string | null;
  /** ACME_CAA_IDENTITIES: the CAA issuer domains that allow our CA (default: the directory's caaIdentities). */
  acmeCaaIdentities: string[] | null;
  /** ACME_CA_FILE: PEM of CAs the ACME directory's TLS certificate is checked against too (a private CA). */
  acmeCaFile: string | null;
}

/** A CIDR of an *_ALLOWED_NETWORKS variable. */
export interface Network {
  address: string;
  prefix: number;
  family: 'ipv4' | 'ipv6';
}

export interface DomainConnectConfig {
  /**
   * DOMAIN_CONNECT_ALLOWED_NETWORKS: CIDRs a DNS provider's settings and template lookups may be fetched
   * from although not public (then over http; tests), default none.
   */
  allowedNetworks: Network[];
  /** DOMAIN_CONNECT_PROVIDER_ID / DOMAIN_CONNECT_SERVICE_ID: the platform's template; both or neither. */
  template: { providerId: string; serviceId: string } | null;
  /**
   * DOMAIN_CONNECT_SIGNING_KEY: the template's RSA private key (PEM text, or the path of a PEM file) that
   * signs apply URLs; null leaves them unsigned. DOMAIN_CONNECT_SIGNING_KEY_ID (default `_dcpubkeyv1`):
   * the `key` parameter, the name of the TXT record under the template's syncPubKeyDomain.
   */
  signingKey: KeyObject | null;
  signingKeyId: string;
}

/** One entry of OAUTH_PROVIDERS (DECISIONS.md §5). */
export interface OAuthProviderConfig {
  id: string;
  displayName: string | null;
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** Scopes asked for; always holds `openid`. Default `openid email profile`. */
  scopes: string[];
  /** Reseller hostnames it is offered on (lowercase); null: the platform's own hosts. */
  hosts: string[] | null;
}

export const ELEVATION_METHOD_NAMES = ['pin', 'totp', 'webauthn'] as const;
export type ElevationMethodName = (typeof ELEVATION_METHOD_NAMES)[number];

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n  - ${problems.join('\n  - ')}`);
    this.name = 'ConfigError';
  }
}

type Env = Record<string, string | undefined>;

export function loadConfig(env: Env = process.env): Config {
  const problems: string[] = [];
  const str = (name: string, fallback: string) => {
    const v = env[name]?.trim();
    return v === undefined || v === '' ? fallback : v;
  };
  const opt = (name: string) => {
    const v = env[name]?.trim();
    return v === undefined || v === '' ? null : v;
  };
  const int = (name: string, fallback: number, min: number, max: number) => {
    const raw = opt(name);
    if (raw === null) return fallback;
    const n = Number(raw);
    if (!/^\d+$/.test(raw) || n < min || n > max) {
      problems.push(`${name} must be an integer from ${min} to ${max}, got "${raw}"`);
      return fallback;
    }
    return n;
  };
  const url = (name: string, fallback: string | null, protocols: string[]) => {
    const raw = opt(name) ?? fallback;
    if (raw === null) return null;
    try {
      const u = new URL(raw);
      if (!protocols.includes(u.protocol)) throw new Error('protocol');
      return raw;
    } catch {
      problems.push(`${name} must be a ${protocols.join(' or ')} URL, got "${redactUrl(raw)}"`);
      return fallback;
    }
  };

  const host = str('HOST', '127.0.0.1');
  const port = int('PORT', 8080, 0, 65535);
  const gatewayPort = int('GATEWAY_PORT', 8081, 0, 65535);
  const gatewayPublicUrl = (
    url('GATEWAY_PUBLIC_URL', `http://${host.includes(':') ? `[${host}]` : host}:${gatewayPort}`, [
      'http:',
      'https:',
    ]) ?? ''
  ).replace(/\/+$/, '');
  const shellIdleSeconds = int('SHELL_IDLE_SECONDS', 900, 1, 7 * 24 * 3600);
  const shellMaxSeconds = int('SHELL_MAX_SECONDS', 28_800, 1, 7 * 24 * 3600);
  const gatewayMaxConnectionsPerUser = int('GATEWAY_MAX_CONNECTIONS_PER_USER', 32, 1, 100_000);
  const gatewayMaxConnectionsPerResource = int('GATEWAY_MAX_CONNECTIONS_PER_RESOURCE', 256, 1, 100_000);
  const sftpPort = int('SFTP_PORT', 2022, 0, 65535);
  const sftpPublicHost = str('SFTP_PUBLIC_HOST', host);
  const publicBaseUrl = (
    url('PUBLIC_BASE_URL', `http://127.0.0.1:${port}`, ['http:', 'https:']) ?? ''
  ).replace(/\/+$/, '');
  const databaseUrl = url('DATABASE_URL', null, ['postgres:', 'postgresql:']);
  const smtpUrl = url('SMTP_URL', null, ['smtp:', 'smtps:']);
  const dnsServers = (opt('DNS_SERVERS') ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  for (const server of dnsServers) {
    if (!/^(\[[0-9a-fA-F:]+\]|[0-9.]+|[0-9a-fA-F:]+)(:\d{1,5})?$/.test(server)) {
      problems.push(`DNS_SERVERS entry "${server}" must be an IP address with an optional :port`);
    }
  }
  const dnsTimeoutMs = int('DNS_TIMEOUT_MS', 5000, 50, 60_000);
  const networks = (name: string): Network[] => {
    const parsed: Network[] = [];
    for (const raw of (opt(name) ?? '').split(',').map((s) => s.trim()).filter(Boolean)) {
      const [address = '', prefixText = ''] = raw.split('/');
      const family = isIP(address);
      const prefix = Number(prefixText);
      if (family === 0 || !/^\d{1,3}$/.test(prefixText) || prefix > (family === 4 ? 32 : 128)) {
        problems.push(`${name} entry "${raw}" must be a CIDR such as 127.0.0.0/8`);
        continue;
      }
      parsed.push({ address, prefix, family: family === 4 ? 'ipv4' : 'ipv6' });
    }
    return parsed;
  };
  const importAllowedNetworks = networks('IMPORT_ALLOWED_NETWORKS');
  const domainConnect = domainConnectConfig(opt, problems, networks('DOMAIN_CONNECT_ALLOWED_NETWORKS'));
  const dbTimeoutMs = int('DB_TIMEOUT_MS', 5000, 100, 600_000);
  const scaleRaw = opt('SOURCE_RATE_LIMIT_SCALE');
  let sourceRateLimitScale = 1;
  if (scaleRaw !== null) {
    sourceRateLimitScale = Number(scaleRaw);
    if (!Number.isFinite(sourceRateLimitScale) || sourceRateLimitScale <= 0) {
      problems.push(`SOURCE_RATE_LIMIT_SCALE must be a positive number, got "${scaleRaw}"`);
      sourceRateLimitScale = 1;
    }
  }
  const capabilities = Object.fromEntries(CAPABILITY_NAMES.map((c) => [c, false])) as Record<
    CapabilityName,
    boolean
  >;
  for (const name of (opt('CAPABILITIES') ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)) {
    if ((CAPABILITY_NAMES as readonly string[]).includes(name)) capabilities[name as CapabilityName] = true;
    else
      problems.push(
        `CAPABILITIES names unknown capability "${name}" (known: ${CAPABILITY_NAMES.join(', ')})`,
      );
  }
  const environmentRaw = str('NODE_ENV', 'development');
  const environment = (['development', 'production', 'test'] as const).find((e) => e === environmentRaw);
  if (!environment)
    problems.push(`NODE_ENV must be development, production or test, got "${environmentRaw}"`);
  const platformDomain = str('PLATFORM_DOMAIN', 'platform.local').toLowerCase();
  if (!/^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)+$/.test(platformDomain)) {
    problems.push(`PLATFORM_DOMAIN must be a DNS name such as example.com, got "${platformDomain}"`);
  }

  const logFormatRaw = opt('LOG_FORMAT')?.toLowerCase() ?? null;
  const logFormat = LOG_FORMATS.find((f) => f === logFormatRaw) ?? null;
  if (logFormatRaw !== null && logFormat === null)
    problems.push(`LOG_FORMAT must be json or pretty, got "${logFormatRaw}"`);

  const workerRaw = str('WORKER', 'on').toLowerCase();
  if (workerRaw !== 'on' && workerRaw !== 'off')
    problems.push(`WORKER must be on or off, got "${workerRaw}"`);
  const substrate = str('SUBSTRATE', 'local').toLowerCase();
  if (substrate !== 'local' && substrate !== 'lxd' && substrate !== 'kubernetes')
    problems.push(`SUBSTRATE must be local, lxd or kubernetes, got "${substrate}"`);
  const lxd: LxdConfig = {
    url: str('LXD_URL', 'unix:/var/lib/lxd/unix.socket'),
    certFile: opt('LXD_CLIENT_CERT'),
    keyFile: opt('LXD_CLIENT_KEY'),
    project: str('LXD_PROJECT', 'default'),
    pool: str('LXD_POOL', 'default'),
    target: opt('LXD_TARGET'),
    serverCertFile: opt('LXD_SERVER_CERT'),
    volumeAccess: str('LXD_VOLUME_ACCESS', 'auto').toLowerCase() as LxdConfig['volumeAccess'],
  };
  if (!['auto', 'host', 'instance'].includes(lxd.volumeAccess))
    problems.push(`LXD_VOLUME_ACCESS must be auto, host or instance, got "${lxd.volumeAccess}"`);
  if (!/^(unix:\/.+|https:\/\/.+)$/.test(lxd.url))
    problems.push(`LXD_URL must be unix:/PATH or https://HOST:PORT, got "${lxd.url}"`);
  if (lxd.url.startsWith('https:') && (!lxd.certFile || !lxd.keyFile))
    problems.push(
      'LXD_URL over HTTPS needs LXD_CLIENT_CERT and LXD_CLIENT_KEY (PEM files of a client the cluster trusts)',
    );
  const trustProxyHops = int('TRUST_PROXY_HOPS', 0, 0, 10);
  const refreshIdleTtlSeconds = int('REFRESH_IDLE_TTL_SECONDS', 7 * 24 * 3600, 60, 30 * 24 * 3600);
  const dashboardUrl = (url('DASHBOARD_URL', publicBaseUrl, ['http:', 'https:']) ?? publicBaseUrl).replace(
    /\/+$/,
    '',
  );
  const allowedOrigins: string[] = [];
  for (const raw of (opt('ALLOWED_ORIGINS') ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)) {
    try {
      const u = new URL(raw);
      if ((u.protocol !== 'http:' && u.protocol !== 'https:') || u.origin !== raw.replace(/\/$/, ''))
        throw new Error();
      allowedOrigins.push(u.origin);
    } catch {
      problems.push(`ALLOWED_ORIGINS entry "${raw}" must be an origin such as https://app.example.com`);
    }
  }

  const encryptionKeys: Buffer[] = [];
  for (const [i, raw] of (opt('ENCRYPTION_KEY') ?? '')
    .split(',')
    .map((k) => k.trim())
    .filter(Boolean)
    .entries()) {
    const key = /^[A-Za-z0-9+/_-]+=*$/.test(raw)
      ? Buffer.from(raw, raw.includes('-') || raw.includes('_') ? 'base64url' : 'base64')
      : null;
    if (key?.length === 32) encryptionKeys.push(key);
    else problems.push(`ENCRYPTION_KEY entry ${i + 1} must be 32 bytes in base64 (openssl rand -base64 32)`);
  }
  if (environment === 'production' && encryptionKeys.length === 0 && opt('ENCRYPTION_KEY') === null) {
    problems.push('ENCRYPTION_KEY is required when NODE_ENV=production (openssl rand -base64 32)');
  }
  const elevationMethods: ElevationMethodName[] = [];
  const methodsRaw = opt('ELEVATION_METHODS');
  for (const name of (methodsRaw ?? ELEVATION_METHOD_NAMES.join(','))
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)) {
    const known = ELEVATION_METHOD_NAMES.find((m) => m === name);
    if (known) {
      if (!elevationMethods.includes(known)) elevationMethods.push(known);
    } else
      problems.push(
        `ELEVATION_METHODS names unknown method "${name}" (known: ${ELEVATION_METHOD_NAMES.join(', ')})`,
      );
  }
  const rpId = (opt('WEBAUTHN_RP_ID') ?? safeHost(publicBaseUrl)).toLowerCase();
  if (!/^[a-z0-9]([a-z0-9.-]*[a-z0-9])?$/.test(rpId))
    problems.push(`WEBAUTHN_RP_ID must be a host name, got "${rpId}"`);

  const platformName = str('PLATFORM_NAME', 'Hosting control plane');
  if (platformName.length > 64 || [...platformName].some((c) => c < ' ' || c === ':')) {
    problems.push('PLATFORM_NAME must be at most 64 characters, without control characters or ":"');
  }

  const oauthProviders = parseOAuthProviders(opt('OAUTH_PROVIDERS'), problems);
  const oauthRedirectAllowlist: string[] = [];
  for (const raw of (opt('OAUTH_REDIRECT_ALLOWLIST') ?? `${safeOrigin(dashboardUrl)}/auth/callback`)
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)) {
    let ok = false;
    try {
      const u = new URL(raw);
      ok =
        (u.protocol === 'http:' || u.protocol === 'https:') &&
        u.username === '' &&
        u.password === '' &&
        u.hash === '';
    } catch {
      ok = false;
    }
    if (ok) oauthRedirectAllowlist.push(raw);
    else
      problems.push(
        `OAUTH_REDIRECT_ALLOWLIST entry "${raw}" must be an http(s) URL without userinfo or fragment`,
      );
  }

  const portPool = { from: 20000, to: 20999 };
  const poolRaw = opt('PORT_POOL');
  if (poolRaw !== null) {
    const m = /^(\d{1,5})-(\d{1,5})$/.exec(poolRaw);
    const from = Number(m?.[1]);
    const to = Number(m?.[2]);
    if (!m || from < 1 || to > 65535 || from > to) {
      problems.push(`PORT_POOL must be FROM-TO with 1 <= FROM <= TO <= 65535, got "${poolRaw}"`);
    } else Object.assign(portPool, { from, to });
  }
  const firewallReconcileSeconds = int('FIREWALL_RECONCILE_SECONDS', 60, 1, 3600);
  const gatewayRaw = str('GATEWAY', 'on').toLowerCase();
  if (gatewayRaw !== 'on' && gatewayRaw !== 'off')
    problems.push(`GATEWAY must be on or off, got "${gatewayRaw}"`);
  const edgeRaw = str('EDGE', 'on').toLowerCase();
  if (edgeRaw !== 'on' && edgeRaw !== 'off') problems.push(`EDGE must be on or off, got "${edgeRaw}"`);
  const dnsPort = int('DNS_PORT', 5353, 0, 65535);
  const portOrOff = (name: string, fallback: number) =>
    str(name, '').toLowerCase() === 'off' ? null : int(name, fallback, 0, 65535);
  const ingressHttpPort = portOrOff('INGRESS_HTTP_PORT', 8088);
  const ingressHttpsPort = portOrOff('INGRESS_HTTPS_PORT', 8443);
  const platformDnsRaw = str('PLATFORM_DNS', 'on').toLowerCase();
  if (platformDnsRaw !== 'on' && platformDnsRaw !== 'off')
    problems.push(`PLATFORM_DNS must be on or off, got "${platformDnsRaw}"`);
  const acmeDirectoryUrl = url('ACME_DIRECTORY_URL', null, ['http:', 'https:']);
  const caaRaw = opt('ACME_CAA_IDENTITIES');
  const acmeCaaIdentities =
    caaRaw === null ? null : caaRaw.split(',').map((s) => s.trim().toLowerCase()).filter(Boolean);
  const edgeId = str('EDGE_ID', `local-${host}`);
  if (!/^[A-Za-z0-9][A-Za-z0-9_.:-]{0,99}$/.test(edgeId)) {
    problems.push(`EDGE_ID must be 1-100 of [A-Za-z0-9_.:-], got "${edgeId}"`);
  }

  if (problems.length > 0) throw new ConfigError(problems);
  return {
    host,
    port,
    gatewayPort,
    gatewayPublicUrl,
    shellIdleSeconds,
    shellMaxSeconds,
    gatewayMaxConnectionsPerUser,
    gatewayMaxConnectionsPerResource,
    sftpPort,
    sftpPublicHost,
    publicBaseUrl,
    databaseUrl,
    dataDir: resolve(str('DATA_DIR', './.data')),
    smtpUrl,
    dnsServers,
    dnsTimeoutMs,
    importAllowedNetworks,
    domainConnect,
    dbTimeoutMs,
    sourceRateLimitScale,
    capabilities,
    platformDomain,
    trustProxyHops,
    allowedOrigins: [...new Set([new URL(dashboardUrl).origin, ...allowedOrigins])],
    dashboardUrl,
    refreshIdleTtlSeconds,
    worker: workerRaw !== 'off',
    substrate: substrate === 'kubernetes' ? 'kubernetes' : substrate === 'lxd' ? 'lxd' : 'local',
    lxd,
    validateResponses: environment !== 'production',
    environment: environment ?? 'development',
    logLevel: str('LOG_LEVEL', environment === 'test' ? 'warn' : 'info'),
    logFormat,
    encryptionKeys,
    elevationMethods,
    platformName,
    webauthn: {
      rpId,
      rpName: platformName,
      origins: [
        ...new Set([safeOrigin(publicBaseUrl), ...allowedOrigins, new URL(dashboardUrl).origin]),
      ].filter(Boolean),
    },
    oauthProviders,
    oauthRedirectAllowlist,
    portPool,
    firewallReconcileSeconds,
    gateway: gatewayRaw !== 'off',
    edge: edgeRaw !== 'off',
    edgeId,
    dnsPort,
    platformDns: platformDnsRaw !== 'off',
    ingressHttpPort,
    ingressHttpsPort,
    acmeDirectoryUrl,
    acmeCaaIdentities,
    acmeCaFile: opt('ACME_CA_FILE'),
  };
}

/** Provider ids that would read as another route under /auth/oauth/ (spec/paths/oauth.yaml). */
const RESERVED_PROVIDER_IDS = new Set(['accounts', 'complete', 'link', 'providers']);
const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost', '[::1]']);

/**
 * OAUTH_PROVIDERS: a JSON array of {id, display_name, issuer, client_id, client_secret, scopes?, hosts?}.
 * Issuers are https, except on loopback (a provider on this machine, as in tests).
 */
function parseOAuthProviders(raw: string | null, problems: string[]): OAuthProviderConfig[] {
  if (raw === null) return [];
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    problems.push(
      'OAUTH_PROVIDERS must be a JSON array of {id, display_name, issuer, client_id, client_secret, scopes?, hosts?}',
    );
    return [];
  }
  if (!Array.isArray(parsed)) {
    problems.push('OAUTH_PROVIDERS must be a JSON array');
    return [];
  }
  const providers: OAuthProviderConfig[] = [];
  for (const [i, entry] of parsed.entries()) {
    const at = `OAUTH_PROVIDERS[${i}]`;
    if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) {
      problems.push(`${at} must be an object`);
      continue;
    }
    const e = entry as Record<string, unknown>;
    const before = problems.length;
    const text = (key: string) =>
      typeof e[key] === 'string' && (e[key] as string).trim() !== '' ? (e[key] as string).trim() : null;
    const id = text('id');
    if (id === null || !/^[a-z0-9][a-z0-9._-]{0,63}$/.test(id) || RESERVED_PROVIDER_IDS.has(id)) {
      problems.push(`${at}.id must be 1-64 of [a-z0-9._-], not ${[...RESERVED_PROVIDER_IDS].join(', ')}`);
    } else if (providers.some((p) => p.id === id)) problems.push(`${at}.id "${id}" is given twice`);
    if (e.display_name !== undefined && e.display_name !== null && typeof e.display_name !== 'string') {
      problems.push(`${at}.display_name must be a string or null`);
    }
    const issuer = text('issuer');
    let issuerOk = false;
    try {
      const u = new URL(issuer ?? '');
      issuerOk =
        (u.protocol === 'https:' || (u.protocol === 'http:' && LOOPBACK_HOSTS.has(u.hostname))) &&
        !u.search &&
        !u.hash;
    } catch {
      issuerOk = false;
    }
    if (!issuerOk)
      problems.push(`${at}.issuer must be an https URL (http only on loopback), without query or fragment`);
    const clientId = text('client_id');
    if (clientId === null) problems.push(`${at}.client_id must be a non-empty string`);
    const clientSecret = text('client_secret');
    if (clientSecret === null) problems.push(`${at}.client_secret must be a non-empty string`);
    const scopes = e.scopes === undefined ? ['openid', 'email', 'profile'] : e.scopes;
    if (
      !Array.isArray(scopes) ||
      !scopes.every((s) => typeof s === 'string' && /^[\x21\x23-\x5b\x5d-\x7e]+$/.test(s)) ||
      !scopes.includes('openid')
    ) {
      problems.push(`${at}.scopes must be an array of scope names that includes "openid"`);
    }
    const hosts = e.hosts === undefined || e.hosts === null ? null : e.hosts;
    if (
      hosts !== null &&
      (!Array.isArray(hosts) ||
        hosts.length === 0 ||
        !hosts.every((h) => typeof h === 'string' && /^[a-z0-9]([a-z0-9.-]*[a-z0-9])?$/i.test(h)))
    ) {
      problems.push(`${at}.hosts must be a non-empty array of hostnames`);
    }
    if (problems.length > before) continue;
    providers.push({
      id: id!,
      displayName: typeof e.display_name === 'string' ? e.display_name : null,
      issuer: issuer!,
      clientId: clientId!,
      clientSecret: clientSecret!,
      scopes: [...new Set(scopes as string[])],
      hosts: hosts === null ? null : (hosts as string[]).map((h) => h.toLowerCase()),
    });
  }
  return providers;
}

function safeHost(url: string): string {
  try {
    return new URL(url).hostname;
  } catch {
    return 'localhost';
  }
}

function safeOrigin(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return '';
  }
}

/** Strips the password from a URL so it can appear in a message or a log line. */
export function redactUrl(raw: string): string {
  try {
    const u = new URL(raw);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return '(unparseable URL)';
  }
}

/** A Domain Connect id (providerId, serviceId): what the spec's template file names allow. */
const TEMPLATE_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,126}$/;

function domainConnectConfig(
  opt: (name: string) => string | null,
  problems: string[],
  allowedNetworks: Network[],
): DomainConnectConfig {
  const providerId = opt('DOMAIN_CONNECT_PROVIDER_ID');
  const serviceId = opt('DOMAIN_CONNECT_SERVICE_ID');
  if ((providerId === null) !== (serviceId === null))
    problems.push('DOMAIN_CONNECT_PROVIDER_ID and DOMAIN_CONNECT_SERVICE_ID are set together or not at all');
  for (const [name, value] of [
    ['DOMAIN_CONNECT_PROVIDER_ID', providerId],
    ['DOMAIN_CONNECT_SERVICE_ID', serviceId],
  ] as const) {
    if (value !== null && !TEMPLATE_ID.test(value))
      problems.push(`${name} must be letters, digits, dots, hyphens and underscores, got "${value}"`);
  }
  const signingKeyId = opt('DOMAIN_CONNECT_SIGNING_KEY_ID') ?? '_dcpubkeyv1';
  if (!/^[A-Za-z0-9_]([A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?$/.test(signingKeyId))
    problems.push(`DOMAIN_CONNECT_SIGNING_KEY_ID must be one DNS label, got "${signingKeyId}"`);
  let signingKey: KeyObject | null = null;
  const keyText = opt('DOMAIN_CONNECT_SIGNING_KEY');
  if (keyText !== null) {
    // Never the value in a message: it is a private key.
    try {
      const pem = keyText.startsWith('-----BEGIN') ? keyText.replace(/\\n/g, '\n') : readFileSync(keyText, 'utf8');
      signingKey = createPrivateKey(pem);
      if (signingKey.asymmetricKeyType !== 'rsa') {
        problems.push('DOMAIN_CONNECT_SIGNING_KEY must be an RSA private key (Domain Connect signs with RS256)');
        signingKey = null;
      }
    } catch {
      problems.push('DOMAIN_CONNECT_SIGNING_KEY must be an RSA private key in PEM, or the path of a readable PEM file');
    }
  }
  return {
    allowedNetworks,
    template: providerId !== null && serviceId !== null ? { providerId, serviceId } : null,
    signingKey,
    signingKeyId,
  };
}
