// Captcha on the actions the public captcha configuration of the request's host lists
// (DECISIONS.md §3): the solved challenge travels in X-Captcha-Token and is checked with the
// provider's verify URL (the siteverify protocol hCaptcha and Turnstile share).
import { ApiError } from '../../http/errors.js';
import type { RequestContext } from '../../http/handler.js';
import { toPublicCaptchaConfig } from '../public/mappers.js';
import { findCaptchaConfigForHost } from '../public/store.js';

const VERIFY_TIMEOUT_MS = 5000;

const refused = (detail: string) => new ApiError(400, 'captcha-failed', detail);

export async function requireCaptcha(ctx: RequestContext, action: string): Promise<void> {
  const row = await findCaptchaConfigForHost(ctx.sql, ctx.host);
  const pub = toPublicCaptchaConfig(row);
  if (!row || !pub.enabled || !pub.protected_actions.includes(action)) return;
  const token = ctx.header('x-captcha-token');
  if (!token) throw refused('This action needs a solved captcha in X-Captcha-Token.');
  let success = false;
  try {
    const secret = await ctx.box.openText('captcha-secret', row.secret_sealed!);
    const res = await fetch(row.verify_url!, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ secret, response: token, remoteip: ctx.ip, sitekey: row.site_key! }),
      signal: AbortSignal.timeout(VERIFY_TIMEOUT_MS),
    });
    success = res.ok && ((await res.json()) as { success?: unknown }).success === true;
  } catch (err) {
    // The provider being down must not open the door: refuse, and say why in the log.
    ctx.log.warn({ request_id: ctx.requestId, cause: err instanceof Error ? err.name : 'unknown' }, 'captcha verify failed');
  }
  if (!success) throw refused('The captcha was not solved or has expired; solve it again.');
}
