// The little of oidc-provider 9 (which ships no types) that test/support/oidc.ts uses.
declare module 'oidc-provider' {
  import type { IncomingMessage, ServerResponse } from 'node:http';

  export interface AccountClaims {
    sub: string;
    [claim: string]: unknown;
  }

  export interface Account {
    accountId: string;
    claims(use: string, scope: string): Promise<AccountClaims> | AccountClaims;
  }

  export interface Interaction {
    uid: string;
    prompt: { name: string; reasons: string[]; details: Record<string, unknown> };
    params: Record<string, unknown> & { client_id: string; scope?: string };
    session?: { accountId?: string };
  }

  export interface GrantInstance {
    addOIDCScope(scope: string): void;
    save(): Promise<string>;
  }

  interface OidcContext {
    oidc: {
      client: { clientId: string };
      session: { accountId?: string; grantIdFor(clientId: string): string | undefined };
      result?: { consent?: { grantId?: string } };
      provider: Provider;
    };
  }

  export interface Configuration {
    clients?: Record<string, unknown>[];
    findAccount?(ctx: unknown, sub: string): Promise<Account | undefined> | Account | undefined;
    claims?: Record<string, string[]>;
    scopes?: string[];
    features?: Record<string, unknown>;
    interactions?: { url(ctx: unknown, interaction: Interaction): string | Promise<string> };
    loadExistingGrant?(ctx: OidcContext): Promise<GrantInstance | undefined>;
    jwks?: { keys: Record<string, unknown>[] };
    cookies?: { keys: string[] };
    pkce?: { required?(): boolean };
    renderError?(ctx: unknown, out: Record<string, unknown>, error: Error): void | Promise<void>;
    [key: string]: unknown;
  }

  export class Provider {
    constructor(issuer: string, configuration?: Configuration);
    callback(): (req: IncomingMessage, res: ServerResponse) => void;
    interactionDetails(req: IncomingMessage, res: ServerResponse): Promise<Interaction>;
    interactionFinished(
      req: IncomingMessage,
      res: ServerResponse,
      result: Record<string, unknown>,
      options?: { mergeWithLastSubmission?: boolean },
    ): Promise<void>;
    Grant: (new (init: { accountId?: string; clientId: string }) => GrantInstance) & {
      find(id: string): Promise<GrantInstance | undefined>;
    };
    on(event: string, listener: (...args: unknown[]) => void): this;
  }
}
