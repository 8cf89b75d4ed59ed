// How parameter and field names become flags. Deterministic and documented in the README, because
// users type them: `error_id` → `--error-id`, `pageSize` → `--page-size`, header `X-Captcha-Token` →
// `--captcha-token`.

export function kebabCase(name: string): string {
  return name
    .replace(/([a-z0-9])([A-Z])/g, '$1-$2')
    .replace(/[^A-Za-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .toLowerCase();
}

export function flagFor(location: 'query' | 'header' | 'body', name: string): string {
  const base = kebabCase(location === 'header' ? name.replace(/^x-/i, '') : name);
  return `--${base}`;
}
