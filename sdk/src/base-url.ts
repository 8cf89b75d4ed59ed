// DECISIONS.md §1: every route is under /api/v2. Callers give the platform's URL; a URL that
// already ends in /api/v2 is accepted too, so copying either from a browser works.
const API_PREFIX = '/api/v2';

export function apiBaseUrl(platformUrl: string): string {
  let url: URL;
  try {
    url = new URL(platformUrl);
  } catch {
    throw new TypeError(
      `baseUrl must be an absolute URL such as https://api.example.com, got ${JSON.stringify(platformUrl)}`,
    );
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new TypeError(`baseUrl must be an http or https URL, got ${JSON.stringify(platformUrl)}`);
  }
  const path = url.pathname.replace(/\/+$/, '');
  return `${url.origin}${path.endsWith(API_PREFIX) ? path : path + API_PREFIX}`;
}
