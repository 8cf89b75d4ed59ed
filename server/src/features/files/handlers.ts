// Files on a service's volume (document 2 §4 "Files"; DECISIONS.md §6 "Files", "The edge gateway"):
// list, read and write small text files, delete, make directories, and tickets for the gateway, which
// alone carries the bytes of downloads and file sessions. Every file operation goes through the
// confined file layer (substrate/local/files); reads need membership, the rest changing the service.
import { actorOf, recordAudit } from '../../audit/record.js';
import type { Db } from '../../db/client.js';
import { unprocessable } from '../../http/errors.js';
import type { AreaHandlers, RequestContext, UserAuth } from '../../http/handler.js';
import { substrateCapabilities } from '../../substrate/capabilities.js';
import { parseVolumePath } from '../../substrate/local/files/index.js';
import { serviceNotFound } from '../services/access.js';
import { mintTicket, ticketSigningKey } from '../consoles/tickets.js';
import { fileCall } from './errors.js';
import { filesTarget, type FilesTarget } from './target.js';

type FileAction = 'file.written' | 'file.deleted' | 'file.directory_created';

async function audit(db: Db, ctx: RequestContext, auth: UserAuth, target: FilesTarget, action: FileAction) {
  await recordAudit(db, ctx, actorOf(auth), {
    organizationId: target.access.organization_id,
    action,
    target: { type: 'resource', id: target.resource.id },
    projectId: target.access.service.project_id,
    serviceInstanceId: target.access.service.id,
  });
}

/** A volume's size in bytes, the ceiling of a file session's uploads. */
function volumeBytes(target: FilesTarget): number {
  return (target.volume.size_gb ?? 1) * 1024 ** 3;
}

export const fileHandlers: AreaHandlers<
  | 'fileList'
  | 'fileDelete'
  | 'fileRead'
  | 'fileWrite'
  | 'directoryCreate'
  | 'fileDownloadTicketCreate'
  | 'fileSessionTicketCreate'
> = {
  async fileList({ path, query, auth, ctx }) {
    const target = await filesTarget(ctx.sql, ctx.substrate, auth, path, 'services.read');
    const listing = await fileCall(() => target.files.list(query.path ?? '/'));
    return { status: 200, body: listing };
  },

  async fileDelete({ path, query, auth, ctx }) {
    const target = await filesTarget(ctx.sql, ctx.substrate, auth, path, 'services.manage');
    await fileCall(() => target.files.remove(query.path, { recursive: query.recursive === true }));
    await audit(ctx.sql, ctx, auth, target, 'file.deleted');
    return { status: 204 };
  },

  async fileRead({ path, query, auth, ctx }) {
    const target = await filesTarget(ctx.sql, ctx.substrate, auth, path, 'services.read');
    return { status: 200, body: await fileCall(() => target.files.read(query.path)) };
  },

  async fileWrite({ path, query, body, auth, ctx }) {
    const target = await filesTarget(ctx.sql, ctx.substrate, auth, path, 'services.manage');
    const entry = await fileCall(() => target.files.write(query.path, body.content));
    await audit(ctx.sql, ctx, auth, target, 'file.written');
    return { status: 200, body: entry };
  },

  async directoryCreate({ path, body, auth, ctx }) {
    const target = await filesTarget(ctx.sql, ctx.substrate, auth, path, 'services.manage');
    const entry = await fileCall(() => target.files.mkdir(body.path));
    await audit(ctx.sql, ctx, auth, target, 'file.directory_created');
    return { status: 200, body: entry };
  },

  async fileDownloadTicketCreate({ path, body, auth, ctx }) {
    if (!substrateCapabilities(ctx.config.substrate).gateway) throw serviceNotFound();
    const key = await ticketSigningKey(ctx);
    // Access first (a stranger's bad path is the 404 of an unknown id too), then the file is looked at
    // before the ticket exists: a ticket to nothing helps nobody.
    const target = await filesTarget(ctx.sql, ctx.substrate, auth, path, 'services.manage');
    const filePath = await fileCall(async () => parseVolumePath(body.path).path);
    const entry = await fileCall(() => target.files.stat(filePath));
    if (entry.kind === 'directory') {
      throw unprocessable('is-a-directory', `${filePath} is a directory; download its files one by one.`);
    }
    return ctx.sql.begin(async (tx) => {
      const locked = await filesTarget(tx, ctx.substrate, auth, path, 'services.manage');
      const ticket = await mintTicket(tx, ctx, auth, key, {
        purpose: 'download',
        access: locked.access,
        resourceId: locked.resource.id,
        path: filePath,
        details: { volume_id: locked.volume.id, path: filePath },
        action: 'file.download_ticket_issued',
      });
      return { status: 200 as const, body: fileTicket(ctx, ticket) };
    });
  },

  async fileSessionTicketCreate({ path, auth, ctx }) {
    if (!substrateCapabilities(ctx.config.substrate).gateway) throw serviceNotFound();
    const key = await ticketSigningKey(ctx);
    return ctx.sql.begin(async (tx) => {
      const target = await filesTarget(tx, ctx.substrate, auth, path, 'services.manage');
      const ticket = await mintTicket(tx, ctx, auth, key, {
        purpose: 'file_session',
        access: target.access,
        resourceId: target.resource.id,
        details: { volume_id: target.volume.id, volume_bytes: volumeBytes(target) },
        action: 'file.session_ticket_issued',
      });
      return { status: 200 as const, body: fileTicket(ctx, ticket) };
    });
  },
};

function fileTicket(ctx: RequestContext, ticket: { token: string; expiresAt: Date }) {
  return {
    base_url: ctx.config.gatewayPublicUrl.replace(/\/+$/, ''),
    expires_at: ticket.expiresAt.toISOString(),
    token: ticket.token,
  };
}
