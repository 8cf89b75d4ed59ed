// The screen's exclusive hold (document 2 §3 "screen hold", §4; DECISIONS.md §6 "Screen"): a session id
// minted by the service names it; the caller keeps it secret and refreshes with it. Only its digest is
// stored, in the hold and in the screen tickets minted with it (so the gateway can tell the holder's
// sockets from the watchers').
import { createHash, randomBytes } from 'node:crypto';

/** A hold lasts 60 s from the ticket or the last refresh. */
export const SCREEN_HOLD_SECONDS = 60;
/** noVNC's subprotocol; the gateway accepts it (or none). */
export const SCREEN_PROTOCOLS = ['binary'];

export function newScreenSession(): { id: string; digest: string } {
  const id = randomBytes(24).toString('base64url');
  return { id, digest: screenSessionDigest(id) };
}

export function screenSessionDigest(sessionId: string): string {
  return createHash('sha256').update(sessionId).digest('hex');
}

export function holdExpiry(now: Date): Date {
  return new Date(now.getTime() + SCREEN_HOLD_SECONDS * 1000);
}
