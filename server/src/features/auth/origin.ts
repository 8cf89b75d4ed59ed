// Where emailed links point (document 1, "Sign-in and sessions": a disallowed or malformed origin is a
// real 4xx refusal; omitted, the link points at the platform dashboard).
import type { Config } from '../../config.js';
import { invalidFieldValue } from '../../http/errors.js';

export function linkBase(config: Config, origin: string | null | undefined): string {
  if (origin === undefined || origin === null) return config.dashboardUrl;
  let parsed: URL | null = null;
  try {
    parsed = new URL(origin);
  } catch {
    parsed = null;
  }
  const wellFormed =
    parsed !== null && (parsed.protocol === 'https:' || parsed.protocol === 'http:') && parsed.origin === origin.replace(/\/$/, '');
  if (!wellFormed) {
    throw invalidFieldValue('origin must be an origin such as https://app.example.com.', [
      { location: 'body', pointer: '/origin', message: 'is not an origin' },
    ]);
  }
  if (!config.allowedOrigins.includes(parsed!.origin)) {
    throw invalidFieldValue('This origin is not allowed for emailed links.', [
      { location: 'body', pointer: '/origin', message: 'is not an allowed origin' },
    ]);
  }
  return parsed!.origin;
}
