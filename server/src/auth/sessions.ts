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

/** What every session-authenticated request reads of its session (its user and elevation epoch). */
export type LiveSession = Pick<SessionRow, 'user_id' | 'elevation_epoch'>;

/**
 * A session that may still be used (not revoked, not past its absolute or idle lifetime): what a request
 * needs of it, and no more, as this is the most frequent statement of all.
 */
export async function findLiveSession(db: Db, id: string, now: Date): Promise<LiveSession | undefined> {
  const [row] = await db<LiveSession[]>`
    select user_id, elevation_epoch from sessions
    where id = ${id} and ${liveAt(db, now)}`;
  return row;
}

const liveAt = (db: Db, now: Date) =>
  db`revoked_at is null and absolute_expires_at > ${now} and idle_expires_at > ${now}`;

/**
 * The same test as a boolean of another statement (authz/deferred-session.ts), for the user the access
 * token names: one statement where a request would otherwise make two.
 */
export function liveSessionCondition(db: Db, id: string, userId: string, now: Date) {
  return db`exists (select 1 from sessions where id = ${id} and user_id = ${userId} and ${liveAt(db, now)})`;
}
