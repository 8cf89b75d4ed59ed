// Row → DomainVerification, as an allow-list: a new column never reaches a response by accident.
import type { components } from '../../../../generated/api.js';
import { recordNameOf } from './names.js';
import type { ClaimRow } from './store.js';

const iso = (d: Date | null): string | null => (d === null ? null : d.toISOString());

export const toDomainVerification = (c: ClaimRow): components['schemas']['DomainVerification'] => ({
  domain: c.domain,
  record_name: recordNameOf(c.domain),
  record_type: 'TXT',
  record_value: c.record_value,
  status: c.status,
  first_verified_at: iso(c.first_verified_at),
  verified_at: iso(c.verified_at),
  last_checked_at: iso(c.last_checked_at),
  last_error: c.last_error,
  lost_since: iso(c.lost_since),
  grandfathered_until: iso(c.grandfathered_until),
});
