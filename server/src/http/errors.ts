// One error type for every refusal (DECISIONS.md §2). Handlers throw; one middleware renders
// problem+json. The codes are the spec's ErrorCode enum, so the two cannot drift apart silently.
import type { components } from '../../../generated/api.js';

export type ErrorCode = components['schemas']['ErrorCode'];
export type ValidationIssue = components['schemas']['ValidationIssue'];

const TITLES: Record<ErrorCode, string> = {
  'invalid-request': 'Invalid request',
  'invalid-field-value': 'Invalid field value',
  unauthenticated: 'Not signed in',
  'invalid-credentials': 'Invalid credentials',
  'captcha-failed': 'Captcha required',
  'password-already-set': 'Password already set',
  forbidden: 'Forbidden',
  'elevation-required': 'Elevation required',
  'not-found': 'Not found',
  'method-not-allowed': 'Method not allowed',
  'payload-too-large': 'Payload too large',
  'operation-in-progress': 'Operation in progress',
  'screen-held': 'Screen held',
  'service-running': 'Service running',
  'quota-exceeded': 'Quota exceeded',
  'rate-limited': 'Too many requests',
  'capability-not-available': 'Capability not available',
  'unsupported-media-type': 'Unsupported media type',
  'onboarding-already-completed': 'Onboarding already completed',
  'billing-country-already-set': 'Billing country already set',
  'avatar-source-unavailable': 'Avatar source unavailable',
  'last-sign-in-method': 'Last sign-in method',
  'member-outranks-caller': 'Member outranks caller',
  'member-personal-organization': 'Personal organization',
  'last-owner': 'Last owner',
  'organization-personal': 'Personal organization',
  'organization-not-empty': 'Organization not empty',
  'slug-taken': 'Slug taken',
  'project-slug-reserved': 'Project slug reserved',
  'project-gaming-managed': 'Managed project',
  'project-has-subscriptions': 'Project has subscriptions',
  'hostname-taken': 'Hostname taken',
  'already-a-member': 'Already a member',
  'invitation-pending': 'Invitation pending',
  'invitation-not-pending': 'Invitation not pending',
  'invitation-not-declined': 'Invitation not declined',
  'reinvite-cooldown': 'Re-invite cool-down',
  'idempotency-key-reused': 'Idempotency key reused',
  'not-a-virtual-machine': 'Not a virtual machine',
  'subscription-not-serviceable': 'Subscription not serviceable',
  'subscription-ended': 'Subscription ended',
  'port-quota-exhausted': 'Port quota exhausted',
  'duplicate-allocation': 'Duplicate allocation',
  'no-free-port': 'No free port',
  'system-allocation': 'System allocation',
  'protection-mode-unsupported': 'Protection mode unsupported',
  'no-http-ingress': 'No HTTP ingress',
  'http-name-refused': 'Host name refused',
  'http-domain-needs-tcp': 'HTTP domain needs a TCP allocation',
  'snapshots-unsupported': 'Snapshots unsupported',
  'schedule-action-unsupported': 'Schedule action unsupported',
  'backup-not-ready': 'Backup not ready',
  'sftp-not-provisioned': 'SFTP not provisioned',
  'import-host-refused': 'Import host refused',
  'import-finished': 'Import finished',
  'invalid-path': 'Invalid path',
  'file-too-large': 'File too large',
  'file-not-text': 'File not text',
  'mount-root': 'Mount root',
  'directory-not-empty': 'Directory not empty',
  'not-a-directory': 'Not a directory',
  'is-a-directory': 'Is a directory',
  'game-subdomain-refused': 'Game subdomain refused',
  'custom-domain-limit-reached': 'Custom domain limit reached',
  'parent-domain-in-use': 'Parent domain in use',
  'domain-connect-refused': 'Domain Connect refused',
  'domain-connect-limit-reached': 'Domain Connect limit reached',
  'internal-error': 'Internal error',
  'insufficient-storage': 'Insufficient storage',
  'service-unavailable': 'Service unavailable',
};

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: ErrorCode,
    readonly detail: string,
    readonly extra: {
      errors?: ValidationIssue[];
      details?: string | Record<string, unknown>;
      headers?: Record<string, string>;
      cause?: unknown;
    } = {},
  ) {
    super(detail);
    this.name = 'ApiError';
  }

  get title(): string {
    return TITLES[this.code];
  }
}

export const invalidRequest = (detail: string, errors?: ValidationIssue[]) =>
  new ApiError(400, 'invalid-request', detail, errors ? { errors } : {});
export const invalidFieldValue = (detail: string, errors?: ValidationIssue[]) =>
  new ApiError(400, 'invalid-field-value', detail, errors ? { errors } : {});
export const notFound = (detail = 'The resource does not exist.') => new ApiError(404, 'not-found', detail);
export const forbidden = (detail = 'You may not access this resource.') =>
  new ApiError(403, 'forbidden', detail);
export const elevationRequired = (
  detail = 'This needs an elevated session: elevate with your PIN, TOTP or a passkey first.',
) => new ApiError(403, 'elevation-required', detail);
export const unprocessable = (code: ErrorCode, detail: string, details?: string | Record<string, unknown>) =>
  new ApiError(422, code, detail, details === undefined ? {} : { details });
export const conflict = (code: ErrorCode, detail: string) => new ApiError(409, code, detail);
export const unsupportedMediaType = (detail: string) => new ApiError(415, 'unsupported-media-type', detail);
export const rateLimited = (retryAfterSeconds: number) =>
  new ApiError(429, 'rate-limited', 'Too many requests; retry later.', {
    headers: { 'Retry-After': String(Math.max(1, Math.ceil(retryAfterSeconds))) },
  });
export const capabilityNotAvailable = (capability: string) =>
  new ApiError(501, 'capability-not-available', `This deployment does not offer ${capability}.`);
export const internalError = (cause: unknown) =>
  new ApiError(500, 'internal-error', 'An unexpected error occurred; quote the request id to support.', {
    cause,
  });

/** RFC 4918 §11.5: the disk a write goes to is full (ENOSPC) or its quota spent (EDQUOT). */
export const insufficientStorage = (detail: string) => new ApiError(507, 'insufficient-storage', detail);

/** Seconds a client waits before retrying when the database is unavailable (a restart takes about that). */
export const DATABASE_RETRY_AFTER_SECONDS = 2;
export const serviceUnavailable = (cause: unknown) =>
  new ApiError(503, 'service-unavailable', 'The database is unavailable; retry after the number of seconds in Retry-After.', {
    headers: { 'Retry-After': String(DATABASE_RETRY_AFTER_SECONDS) },
    cause,
  });

export interface ProblemBody {
  type: string;
  title: string;
  status: number;
  detail: string;
  code: ErrorCode;
  request_id: string;
  errors?: ValidationIssue[];
  details?: string | Record<string, unknown>;
}

export function problemBody(err: ApiError, requestId: string): ProblemBody {
  const body: ProblemBody = {
    type: `/docs/errors#${err.code}`,
    title: err.title,
    status: err.status,
    detail: err.detail,
    code: err.code,
    request_id: requestId,
  };
  if (err.extra.errors) body.errors = err.extra.errors;
  if (err.extra.details !== undefined) body.details = err.extra.details;
  return body;
}
