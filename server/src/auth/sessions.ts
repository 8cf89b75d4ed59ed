// A sign-in session's row and whether it may still be used: read by every authenticated request
// (authz/credentials.ts) as well as by the auth feature, so it lives below both.
import type { Db } from '../db/client.js';

export interface SessionRow {
  id: string;
  user_id: string;
  created_at: Date;
  last_used_at: Date;
  absolute_expires_at: Date;
  idle_expires_at: Date;
  user_agent: string | null;
  ip: string | null;
  revoked_at: Date | null;
  /** Moved on by leaving elevation: elevated tokens of an earlier epoch are no longer elevated. */
  elevation_epoch: number;
}

/** A session that may still be used: not revoked, not past its absolute or idle lifetime. */
/**
 * What a request authenticated by a session's access token needs of the session, on every request (its
 * user and elevation epoch while it is live): the narrowest read, as it is the most frequent statement.
 */
export async function liveSessionOf(
  db: Db,
  id: string,
  now: Date,
): Promise<Pick<SessionRow, 'user_id' | 'elevation_epoch'> | undefined> {
  const [row] = await db<Pick<SessionRow, 'user_id' | 'elevation_epoch'>[]>`
    select user_id, elevation_epoch from sessions
    where id = ${id} and revoked_at is null and absolute_expires_at > ${now} and idle_expires_at > ${now}`;
  return row;
}

export async function findLiveSession(db: Db, id: string, now: Date): Promise<SessionRow | undefined> {
  const [row] = await db<SessionRow[]>`
    select id, user_id, created_at, last_used_at, absolute_expires_at, idle_expires_at, user_agent, ip, revoked_at,
           elevation_epoch
    from sessions
    where id = ${id} and revoked_at is null and absolute_expires_at > ${now} and idle_expires_at > ${now}`;
  return row;
}
