// The pages emailed links open when no dashboard is configured (DASHBOARD_URL unset, so links point at
// PUBLIC_BASE_URL): the same paths a dashboard serves (features/auth/passwords.ts and
// features/invitations/handlers.ts build the links), each a small HTML page whose inline script calls
// the API from the browser and says what happened. Nothing is loaded from anywhere else: the style and
// the script are inline and the CSP admits exactly them, by hash.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { escapeHtml } from '../mail/templates.js';

export interface LinkPage {
  /** The Express route. */
  path: string;
  html: string;
  csp: string;
}

const read = (name: string) => readFileSync(new URL(`./browser/${name}`, import.meta.url), 'utf8');
const sha256 = (text: string) => `'sha256-${createHash('sha256').update(text, 'utf8').digest('base64')}'`;

const STATUS = '<p id="status" role="status" aria-live="polite" hidden></p>';
const NOSCRIPT = '<noscript><p>This page needs JavaScript to talk to the API.</p></noscript>';
const SIGN_IN_HINT =
  '<p>Sign in with <code>svcctl login</code> (see the README of the platform), or go on from a dashboard if your platform has one.</p>';

interface PageSource {
  path: string;
  title: string;
  /** The page's own markup, between the title and the status line. */
  body: string;
  /** Its script in browser/, run after common.js. */
  script: string | null;
}

const SOURCES: PageSource[] = [
  {
    path: '/auth/verify-email',
    title: 'Confirm your email address',
    body: `${STATUS}
<section id="next" hidden>${SIGN_IN_HINT}</section>`,
    script: 'verify-email.js',
  },
  {
    path: '/auth/reset-password',
    title: 'Choose a new password',
    body: `<form id="reset" autocomplete="on">
<label for="password">New password</label>
<input id="password" name="password" type="password" autocomplete="new-password" required>
<label for="repeat">The new password again</label>
<input id="repeat" name="repeat" type="password" autocomplete="new-password" required>
<button type="submit">Set the new password</button>
</form>
${STATUS}
<section id="next" hidden>${SIGN_IN_HINT}</section>`,
    script: 'reset-password.js',
  },
  {
    path: '/auth/forgot-password',
    title: 'Forgot your password?',
    body: `<p>We email a link to set a new password to the address of your account.</p>
<form id="forgot">
<label for="email">Email address</label>
<input id="email" name="email" type="email" autocomplete="email" required>
<button type="submit">Email me a link</button>
</form>
${STATUS}`,
    script: 'forgot-password.js',
  },
  {
    path: '/auth/login',
    title: 'Sign in',
    body: `<p>This platform has no dashboard at this address. Sign in from a terminal:</p>
<p><code>npx svcctl login</code></p>
<p>It asks for your email address, your password and the code it emails you.
<a href="forgot-password">Forgot your password?</a></p>`,
    script: null,
  },
  {
    path: '/invitations/:id',
    title: 'Invitation to an organization',
    body: `<form id="sign-in" hidden>
<p>Sign in with the email address the invitation was sent to.</p>
<label for="email">Email address</label>
<input id="email" name="email" type="email" autocomplete="username" required>
<label for="password">Password</label>
<input id="password" name="password" type="password" autocomplete="current-password" required>
<button type="submit">Sign in</button>
</form>
<form id="code" hidden>
<label for="code-input">Sign-in code</label>
<input id="code-input" name="code" inputmode="numeric" autocomplete="one-time-code" pattern="[0-9]{6}" maxlength="6" required>
<button type="submit">Continue</button>
</form>
<section id="invitation" hidden>
<dl>
<dt>Organization</dt><dd id="organization"></dd>
<dt>Invited by</dt><dd id="inviter"></dd>
<dt>Role</dt><dd id="role"></dd>
<dt>Expires</dt><dd id="expires"></dd>
</dl>
<div id="decide" hidden>
<button type="button" value="accept">Accept</button>
<button type="button" value="decline">Decline</button>
<p>Declining keeps the organization from inviting you again for 30 days, unless you allow it.</p>
</div>
</section>
${STATUS}
<p>No account yet? Create one with <code>npx svcctl signup</code>, confirm your address, then come back to this link.</p>`,
    script: 'invitation.js',
  },
];

/** Every link page, rendered for this platform's name; built once at start. */
export function buildLinkPages(platformName: string): LinkPage[] {
  const style = read('page.css');
  const common = read('common.js');
  return SOURCES.map((source) => {
    const script = source.script === null ? null : `${common}\n${read(source.script)}`;
    const html = [
      '<!doctype html>',
      '<html lang="en">',
      '<head>',
      '<meta charset="utf-8">',
      '<meta name="viewport" content="width=device-width, initial-scale=1">',
      '<meta name="referrer" content="no-referrer">',
      `<title>${escapeHtml(source.title)} · ${escapeHtml(platformName)}</title>`,
      `<style>${style}</style>`,
      '</head>',
      '<body>',
      '<main>',
      `<p class="platform">${escapeHtml(platformName)}</p>`,
      `<h1>${escapeHtml(source.title)}</h1>`,
      source.body,
      script === null ? '' : NOSCRIPT,
      '</main>',
      script === null ? '' : `<script>${script}</script>`,
      '</body>',
      '</html>',
      '',
    ].join('\n');
    // Nothing but the inline style and script, fetches to this origin, and no framing, no form
    // posting anywhere, no <base>: a page holding a token in its URL reaches no one else.
    const csp = [
      "default-src 'none'",
      `style-src ${sha256(style)}`,
      script === null ? "script-src 'none'" : `script-src ${sha256(script)}`,
      "connect-src 'self'",
      "base-uri 'none'",
      "form-action 'none'",
      "frame-ancestors 'none'",
    ].join('; ');
    return { path: source.path, html, csp };
  });
}
