// Services for the document-2 tests: the catalog's fixed product ids (migration 0013), and provisioning
// through the real staff route, waiting for the operation the worker runs on the app's local substrate.
import type { components, SvcClient } from '@svcplatform/sdk';
import { staffMember, type Staff } from '../admin-content/staff.js';
import type { TestApp } from './app.js';
import { signedIn, type Caller } from './organizations.js';
import type { TestSmtp } from './smtp.js';

export const PRODUCTS = {
  'vps-small': '5c0a7a10-0000-4000-8000-000000000001',
  'block-game': '5c0a7a10-0000-4000-8000-000000000002',
  'arena-game': '5c0a7a10-0000-4000-8000-000000000003',
  'web-app': '5c0a7a10-0000-4000-8000-000000000004',
} as const;
export type ProductSlug = keyof typeof PRODUCTS;

export type Operation = components['schemas']['Operation'];

/** The operation once it ended (the SDK's waitForOperation, polling briskly); throws after `timeoutMs`. */
export function awaitOperation(
  reader: SvcClient,
  serviceId: string,
  operationId: string,
  timeoutMs = 30_000,
): Promise<Operation> {
  return reader.waitForOperation(serviceId, operationId, {
    intervalMs: 20,
    maxIntervalMs: 200,
    signal: AbortSignal.timeout(timeoutMs),
  });
}

export interface Provisioned {
  subscriptionId: string;
  serviceInstanceId: string;
  operationId: string;
  /** The machine (VPS) or workload: the primary resource. */
  primaryResourceId: string;
  volumeResourceId: string;
  operation: Operation;
}

/**
 * POST /admin/subscriptions as `staff` (an elevated session, or a token, of a user holding
 * manage_services), then waits for provisioning to end. Throws unless it succeeded.
 */
export async function provisionService(
  staff: SvcClient,
  input: { projectId: string; productSlug?: ProductSlug; osImage?: string; name?: string },
): Promise<Provisioned> {
  const created = await staff.adminSubscriptionCreate({
    body: {
      project_id: input.projectId,
      product_id: PRODUCTS[input.productSlug ?? 'vps-small'],
      name: input.name ?? 'Test server',
      ...(input.osImage ? { os_image: input.osImage } : {}),
    },
  });
  const operation = await awaitOperation(staff, created.service_instance_id, created.operation_id);
  if (operation.status !== 'succeeded')
    throw new Error(`provisioning ${operation.status}: ${operation.error ?? ''}`);
  const { resources } = await staff.serviceInstanceResourceList({
    path: { id: created.service_instance_id },
  });
  return {
    subscriptionId: created.subscription_id,
    serviceInstanceId: created.service_instance_id,
    operationId: created.operation_id,
    primaryResourceId: resources.find((r) => r.role === 'primary')!.id,
    volumeResourceId: resources.find((r) => r.kind === 'volume')!.id,
    operation,
  };
}

/**
 * What most service tests start from: a staff member who provisions (manage_services), and a customer
 * who owns an organization with one project, the services' home. Tags name the accounts (`<tag>-staff`,
 * `<tag>-owner`) and the organization's slug.
 */
export async function serviceCustomer(
  app: TestApp,
  smtp: TestSmtp,
  tag: string,
): Promise<{ staff: Staff; owner: Caller; orgId: string; projectId: string }> {
  const [staff, owner] = await Promise.all([
    staffMember(app, smtp, `${tag}-staff`, ['manage_services']),
    signedIn(app, smtp, `${tag}-owner`),
  ]);
  const orgId = (
    await owner.api.organizationCreate({ body: { name: tag, slug: `${tag}-${Date.now().toString(36)}` } })
  ).id;
  const projectId = (
    await owner.api.projectCreate({ path: { id: orgId }, body: { name: 'Services', slug: 'services' } })
  ).id;
  return { staff, owner, orgId, projectId };
}
