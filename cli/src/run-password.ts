// `svcctl password change|forgot|reset` and `svcctl signup`. Imported when one of them runs.
import type { ParsedInput } from './argv/spec.js';
import { tokenFromLink } from './email-link.js';
import type { GlobalFlags } from './global-options.js';
import { Prompter } from './prompt.js';
import { openClient, openPublicClient } from './sdk-client.js';
import { forgetCredentials } from './session-store.js';
import { loginCommand, requireSignIn, resolveSettings, type Settings } from './settings.js';
import { readEmailAndPassword, readSecret, say, valueOrAsk } from './sign-in-input.js';

async function withPrompter<T>(fn: (prompter: Prompter) => Promise<T>): Promise<T> {
  const prompter = new Prompter();
  try {
    return await fn(prompter);
  } finally {
    prompter.close();
  }
}

const settingsOf = (input: ParsedInput): Promise<Settings> => resolveSettings(input.globals as GlobalFlags);

export interface PasswordChangeOptions {
  currentPassword?: string;
  currentPasswordStdin?: boolean;
  newPassword?: string;
  newPasswordStdin?: boolean;
  keepThisSession?: boolean;
  nonInteractive?: boolean;
}

export async function runPasswordChange(input: ParsedInput): Promise<void> {
  const opts = input.options as PasswordChangeOptions;
  const settings = await settingsOf(input);
  requireSignIn(settings);
  const interactive = opts.nonInteractive !== true;
  await withPrompter(async (prompter) => {
    // With both -stdin flags, stdin's first line is the current password and its second the new one.
    const current = await readSecret(prompter, settings, {
      interactive,
      value: opts.currentPassword,
      flag: '--current-password',
      fromStdin: opts.currentPasswordStdin,
      stdinFlag: '--current-password-stdin',
      question: 'Current password: ',
      what: 'current password',
    });
    const next = await readSecret(prompter, settings, {
      interactive,
      value: opts.newPassword,
      flag: '--new-password',
      fromStdin: opts.newPasswordStdin,
      stdinFlag: '--new-password-stdin',
      question: 'New password: ',
      repeat: 'Repeat the new password: ',
      what: 'new password',
    });
    const client = await openClient(settings);
    // The session to keep: the saved one, or the one of the access token given with --token.
    const keep = opts.keepThisSession
      ? (settings.session?.sessionId ?? (await client.authSessionGet()).session_id)
      : undefined;
    await client.authPasswordChange({
      body: { current_password: current, new_password: next, ...(keep ? { current_session_id: keep } : {}) },
    });
    if (keep) {
      say(settings, 'Password changed. Every other session was signed out; this one stays signed in.');
    } else if (settings.session) {
      await forgetCredentials(settings.profile, settings.configDir, settings.session.sessionId);
      say(
        settings,
        `Password changed. Every session was signed out, this one too, and the saved credentials of profile "${settings.profile}" were removed. Sign in again: ${loginCommand(settings.profile)} (or keep it next time with --keep-this-session).`,
      );
    } else {
      say(settings, 'Password changed. Every session of the account was signed out.');
    }
  });
}

export interface PasswordForgotOptions {
  email?: string;
  captchaToken?: string;
  nonInteractive?: boolean;
}

export async function runPasswordForgot(input: ParsedInput): Promise<void> {
  const opts = input.options as PasswordForgotOptions;
  const settings = await settingsOf(input);
  await withPrompter(async (prompter) => {
    const email = await valueOrAsk(prompter, opts.email, {
      interactive: opts.nonInteractive !== true,
      flag: '--email',
      question: 'Email: ',
      what: 'email address',
    });
    const client = await openPublicClient(settings);
    await client.authPasswordForgot({
      body: { email },
      ...(opts.captchaToken ? { header: { 'X-Captcha-Token': opts.captchaToken } } : {}),
    });
    say(
      settings,
      `If an account uses ${email}, a link to set a new password is on its way (valid 60 minutes). Then open the link, or run: svcctl password reset --token LINK (the whole link, or the token in it).`,
    );
  });
}

export interface PasswordResetOptions {
  token?: string;
  password?: string;
  passwordStdin?: boolean;
  nonInteractive?: boolean;
}

export async function runPasswordReset(input: ParsedInput): Promise<void> {
  const opts = input.options as PasswordResetOptions;
  const settings = await settingsOf(input);
  await withPrompter(async (prompter) => {
    const token = tokenFromLink(
      await valueOrAsk(prompter, opts.token, {
        interactive: false,
        flag: '--token',
        question: '',
        what: 'token',
      }),
    );
    const password = await readSecret(prompter, settings, {
      interactive: opts.nonInteractive !== true,
      value: opts.password,
      flag: '--password',
      fromStdin: opts.passwordStdin,
      stdinFlag: '--password-stdin',
      question: 'New password: ',
      repeat: 'Repeat the new password: ',
      what: 'password',
    });
    const client = await openPublicClient(settings);
    await client.authPasswordReset({ body: { token, password } });
    say(settings, 'Password set. Every session of the account was signed out; sign in with: svcctl login');
  });
}

export interface SignupOptions {
  email?: string;
  password?: string;
  passwordStdin?: boolean;
  name?: string;
  language?: string;
  captchaToken?: string;
  nonInteractive?: boolean;
}

export async function runSignup(input: ParsedInput): Promise<void> {
  const opts = input.options as SignupOptions;
  const settings = await settingsOf(input);
  const interactive = opts.nonInteractive !== true;
  await withPrompter(async (prompter) => {
    const { email, password } = await readEmailAndPassword(prompter, settings, opts, {
      interactive,
      repeat: 'Repeat the password: ',
    });
    const client = await openPublicClient(settings);
    await client.authPasswordSignup({
      body: {
        email,
        password,
        ...(opts.name !== undefined ? { name: opts.name } : {}),
        ...(opts.language !== undefined ? { language: opts.language } : {}),
      },
      ...(opts.captchaToken ? { header: { 'X-Captcha-Token': opts.captchaToken } } : {}),
    });
    // The answer is the same whether or not the address has an account, so this says no more.
    say(
      settings,
      `If ${email} has no account yet, a verification link is on its way (valid 48 hours): open it, or run svcctl auth password verify --token LINK (the whole link, or the token in it). Then sign in: svcctl login`,
    );
  });
}
