// The set-up of svcctl's service tests: a new account signed in to svcctl in a temporary home, a
// project of its personal organization, and one service a staff member provisions there.
import { createClient, type SvcClient } from '@svcplatform/sdk';
import { staffMember, type Staff } from '../../../test/admin-content/staff.js';
import type { TestApp } from '../../../test/support/app.js';
import { newAccount } from '../../../test/support/auth.js';
import { provisionService, type ProductSlug, type Provisioned } from '../../../test/support/services.js';
import type { TestSmtp } from '../../../test/support/smtp.js';
import { writeCredentials } from '../../src/credentials.js';
import { runCli, tempHome, type CliResult, type CliRun } from './run-cli.js';

export interface CliServiceOwner {
  home: ReturnType<typeof tempHome>;
  userId: string;
  projectId: string;
  /** The staff member who provisioned the service (its elevated session). */
  staff: Staff;
  /** The owner's own SDK client (its session). */
  api: SvcClient;
  service: Provisioned;
  /** svcctl as the owner, against the app. */
  svcctl(args: string[], run?: CliRun): Promise<CliResult>;
}

export async function cliServiceOwner(
  app: TestApp,
  smtp: TestSmtp,
  label: string,
  service: {
    productSlug?: ProductSlug;
    osImage?: string;
    name: string;
    project?: { name: string; slug: string };
  },
): Promise<CliServiceOwner> {
  const [owner, staff] = await Promise.all([
    newAccount(app, smtp, `${label}-owner`),
    staffMember(app, smtp, `${label}-staff`, ['manage_services']),
  ]);
  const home = tempHome();
  const { session } = owner;
  await writeCredentials(
    'default',
    { token: session.token, refresh_token: session.refresh_token, session_id: session.session_id },
    home.SVCCTL_CONFIG_DIR,
  );
  const [personal] = await app.sql<{ id: string }[]>`
    select id from organizations where personal_owner_id = ${session.user.id}`;
  const api = createClient({ baseUrl: app.baseUrl, token: session.token, retries: 0 });
  const project = service.project ?? { name: 'Sites', slug: 'sites' };
  const projectId = (await api.projectCreate({ path: { id: personal!.id }, body: project })).id;
  const provisioned = await provisionService(staff.elevated, {
    projectId,
    productSlug: service.productSlug,
    osImage: service.osImage,
    name: service.name,
  });
  return {
    home,
    userId: session.user.id,
    projectId,
    staff,
    api,
    service: provisioned,
    svcctl: (args, run = {}) =>
      runCli(args, { ...run, env: { ...home, SVCCTL_BASE_URL: app.baseUrl, ...run.env } }),
  };
}
