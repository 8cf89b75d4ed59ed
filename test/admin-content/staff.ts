// Staff for the /admin/ content and billing tests: an account holding some system permissions, its
// session as it signed in (not elevated), the elevated token `sudo setup` answers, and an
// admin-authorized API token when asked; and a read-back of every table these routes may write, so a
// refusal can be shown to have changed nothing.
import { createClient, type SvcClient } from '@svcplatform/sdk';
import type { TestApp } from '../support/app.js';
import { newAccount } from '../support/auth.js';
import type { TestSmtp } from '../support/smtp.js';

export interface Staff {
  id: string;
  /** The session as signed in: not elevated. */
  plain: SvcClient;
  /** The same session, elevated with a PIN. */
  elevated: SvcClient;
  /** The elevated access token itself, for plain fetch. */
  elevatedToken: string;
}

export const PIN = '246813';

export const clientOf = (app: TestApp, token?: string): SvcClient =>
  createClient({ baseUrl: app.baseUrl, retries: 0, ...(token ? { token } : {}) });

export async function staffMember(
  app: TestApp,
  smtp: TestSmtp,
  tag: string,
  permissions: string[],
): Promise<Staff> {
  const { session } = await newAccount(app, smtp, tag);
  if (permissions.length > 0) {
    await app.sql`update users set system_permissions = ${permissions}::text[] where id = ${session.user.id}`;
  }
  const plain = clientOf(app, session.token);
  const { token } = await plain.sudoSetup({ body: { pin: PIN } });
  return { id: session.user.id, plain, elevated: clientOf(app, token), elevatedToken: token };
}

/** An admin-authorized API token of `staff` granting these capabilities (minted in the elevated session). */
export async function staffToken(app: TestApp, staff: Staff, capabilities: string[]): Promise<SvcClient> {
  const { secret } = await staff.elevated.meApiTokenCreate({
    body: {
      name: 'ops',
      admin_authorized: true,
      authorization: {
        grants: capabilities.map((capability) => ({ capability, scope: { kind: 'all' as const } })),
      },
    },
  });
  return clientOf(app, secret);
}

const TABLES = [
  'public_incidents',
  'public_maintenances',
  'resellers',
  'captcha_configs',
  'assets',
  'organization_wallets',
  'platform_events',
] as const;

/** Every row of every table the staff content and billing routes write, as text. */
export async function contentState(app: TestApp): Promise<Record<string, string[]>> {
  const state: Record<string, string[]> = {};
  for (const table of TABLES) {
    const rows = await app.sql<
      { row: string }[]
    >`select to_jsonb(t)::text as row from ${app.sql(table)} t order by 1`;
    state[table] = rows.map((r) => r.row);
  }
  return state;
}
