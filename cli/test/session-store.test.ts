import { describe, expect, it } from 'vitest';
import { readCredentials, writeCredentials, type Credentials } from '../src/credentials.js';
import { forgetCredentials, readSession, sessionOf, storeSession } from '../src/session-store.js';
import { tempDir } from './support/run-cli.js';

const pair = (n: number, sessionId = 'sid-1') => ({ token: `t${n}`, refreshToken: `svc_rt_${n}`, sessionId });

describe('sessionOf', () => {
  it('is the saved pair only when all three parts are there', () => {
    expect(sessionOf({ token: 't', refresh_token: 'r', session_id: 's' })).toEqual({
      token: 't',
      refreshToken: 'r',
      sessionId: 's',
    });
    expect(sessionOf({ token: 'svc_pat_x' })).toBeNull();
    expect(sessionOf({ token: 't', refresh_token: '', session_id: 's' })).toBeNull();
    expect(sessionOf({ token: 't', refresh_token: 1, session_id: 's' } as unknown as Credentials)).toBeNull();
    expect(sessionOf(undefined)).toBeNull();
  });
});

describe('storeSession', () => {
  it('claims the profile on sign-in, keeping its other keys', async () => {
    const dir = tempDir();
    await writeCredentials('default', { token: 'svc_pat_old', note: 'kept' }, dir);
    expect(await storeSession('default', pair(1), dir, { claim: true })).toBe(true);
    expect(await readCredentials('default', dir)).toEqual({
      token: 't1',
      refresh_token: 'svc_rt_1',
      session_id: 'sid-1',
      note: 'kept',
    });
  });

  it('updates only the session the profile still holds', async () => {
    const dir = tempDir();
    await storeSession('default', pair(1), dir, { claim: true });
    expect(await storeSession('default', pair(2), dir, { claim: false })).toBe(true);
    expect(await readSession('default', dir)).toEqual(pair(2));
    // Another sign-in replaced it: a late refresh of the old session must not overwrite it.
    await storeSession('default', pair(3, 'sid-2'), dir, { claim: true });
    expect(await storeSession('default', pair(4), dir, { claim: false })).toBe(false);
    expect(await readSession('default', dir)).toEqual(pair(3, 'sid-2'));
    // Signed out meanwhile: not brought back.
    await forgetCredentials('default', dir);
    expect(await storeSession('default', pair(5, 'sid-2'), dir, { claim: false })).toBe(false);
    expect(await readCredentials('default', dir)).toBeUndefined();
  });
});

describe('elevated_until', () => {
  const until = '2026-11-24T03:00:00.000Z';

  it('is saved with the elevated token it describes and read back as elevatedUntil', async () => {
    const dir = tempDir();
    await storeSession('default', pair(1), dir, { claim: true });
    expect(await storeSession('default', { ...pair(2), elevatedUntil: until }, dir, { claim: false })).toBe(
      true,
    );
    expect(await readCredentials('default', dir)).toEqual({
      token: 't2',
      refresh_token: 'svc_rt_2',
      session_id: 'sid-1',
      elevated_until: until,
    });
    expect(await readSession('default', dir)).toEqual({ ...pair(2), elevatedUntil: until });
  });

  it('goes when an un-elevated token replaces the elevated one, or when the session is forgotten', async () => {
    const dir = tempDir();
    await storeSession('default', { ...pair(1), elevatedUntil: until }, dir, { claim: true });
    await storeSession('default', { ...pair(2), elevatedUntil: null }, dir, { claim: false });
    expect(await readCredentials('default', dir)).not.toHaveProperty('elevated_until');
    await storeSession('default', { ...pair(3), elevatedUntil: until }, dir, { claim: false });
    await writeCredentials('default', { ...(await readCredentials('default', dir)), note: 'kept' }, dir);
    expect(await forgetCredentials('default', dir)).toBe(true);
    expect(await readCredentials('default', dir)).toEqual({ note: 'kept' });
  });

  it('is not part of a session without the pair', () => {
    expect(sessionOf({ token: 'svc_pat_x', elevated_until: until })).toBeNull();
  });
});

describe('forgetCredentials', () => {
  it('removes the token, refresh token and session id; the profile goes when nothing else is left', async () => {
    const dir = tempDir();
    await writeCredentials('a', { token: 't', refresh_token: 'r', session_id: 's', note: 'kept' }, dir);
    await writeCredentials('b', { token: 't', refresh_token: 'r', session_id: 's' }, dir);
    expect(await forgetCredentials('a', dir)).toBe(true);
    expect(await forgetCredentials('b', dir, 's')).toBe(true);
    expect(await readCredentials('a', dir)).toEqual({ note: 'kept' });
    expect(await readCredentials('b', dir)).toBeUndefined();
    expect(await forgetCredentials('b', dir)).toBe(false);
  });

  it('with a session id, leaves another session alone', async () => {
    const dir = tempDir();
    await storeSession('default', pair(1, 'sid-new'), dir, { claim: true });
    expect(await forgetCredentials('default', dir, 'sid-old')).toBe(false);
    expect(await readSession('default', dir)).toEqual(pair(1, 'sid-new'));
  });
});
