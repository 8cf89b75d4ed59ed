// The root handler map, typed against every operationId of the spec.
import type { Handlers } from './http/handler.js';
import { adminApplicationHandlers } from './features/admin-applications/handlers.js';
import { adminBillingHandlers } from './features/admin-billing/handlers.js';
import { adminContentHandlers } from './features/admin-content/handlers.js';
import { adminServiceHandlers } from './features/admin-services/handlers.js';
import { adminUserHandlers } from './features/admin-users/handlers.js';
import { apiTokenHandlers } from './features/api-tokens/handlers.js';
import { applicationHandlers } from './features/applications/handlers.js';
import { delegationHandlers } from './features/delegations/handlers.js';
import { domainHandlers } from './features/domains/handlers.js';
import { assetHandlers } from './features/assets/handlers.js';
import { auditHandlers } from './features/audit/handlers.js';
import { backupHandlers } from './features/backups/handlers.js';
import { scheduleHandlers } from './features/schedules/handlers.js';
import { metricsHandlers } from './features/metrics/handlers.js';
import { loginHandlers } from './features/auth/login.js';
import { passwordHandlers } from './features/auth/passwords.js';
import { sessionHandlers } from './features/auth/sessions.js';
import { catalogHandlers } from './features/catalog/handlers.js';
import { avatarHandlers } from './features/me/avatar.js';
import { meHandlers } from './features/me/handlers.js';
import { memberHandlers } from './features/members/handlers.js';
import { oauthHandlers } from './features/oauth/handlers.js';
import { invitationHandlers } from './features/invitations/handlers.js';
import { organizationHandlers } from './features/organizations/handlers.js';
import { projectHandlers } from './features/projects/handlers.js';
import { publicHandlers } from './features/public/handlers.js';
import { serviceHandlers } from './features/services/handlers.js';
import { externalAccessHandlers } from './features/external-access/handlers.js';
import { firewallHandlers } from './features/firewall/handlers.js';
import { importHandlers } from './features/imports/handlers.js';
import { domainConnectHandlers } from './features/domain-connect/handlers.js';
import { customDomainHandlers } from './features/custom-domains/handlers.js';
import { gameSubdomainHandlers } from './features/game-subdomains/handlers.js';
import { parentDomainHandlers } from './features/parent-domains/handlers.js';
import { gameHandlers } from './features/games/handlers.js';
import { consoleHandlers } from './features/consoles/handlers.js';
import { sftpHandlers } from './features/sftp/handlers.js';
import { vpsAccessHandlers } from './features/vps-access/handlers.js';
import { fileHandlers } from './features/files/handlers.js';
import { sudoHandlers } from './features/sudo/handlers.js';
import { webauthnHandlers } from './features/sudo/webauthn.js';

export const handlers: Handlers = {
  ...adminUserHandlers,
  ...adminApplicationHandlers,
  ...adminContentHandlers,
  ...adminBillingHandlers,
  ...apiTokenHandlers,
  ...delegationHandlers,
  ...applicationHandlers,
  ...publicHandlers,
  ...catalogHandlers,
  ...assetHandlers,
  ...loginHandlers,
  ...sessionHandlers,
  ...passwordHandlers,
  ...meHandlers,
  ...avatarHandlers,
  ...sudoHandlers,
  ...webauthnHandlers,
  ...organizationHandlers,
  ...memberHandlers,
  ...oauthHandlers,
  ...invitationHandlers,
  ...auditHandlers,
  ...domainHandlers,
  ...projectHandlers,
  ...adminServiceHandlers,
  ...serviceHandlers,
  ...gameSubdomainHandlers,
  ...domainConnectHandlers,
  ...customDomainHandlers,
  ...parentDomainHandlers,
  ...gameHandlers,
  ...externalAccessHandlers,
  ...firewallHandlers,
  ...backupHandlers,
  ...scheduleHandlers,
  ...metricsHandlers,
  ...importHandlers,
  ...consoleHandlers,
  ...sftpHandlers,
  ...vpsAccessHandlers,
  ...fileHandlers,
};
