// The SDK client for one run, imported only when a command actually calls the API.
import type { SvcClient } from '@svcplatform/sdk';
import { cliVersion } from './cli-version.js';
import type { Settings } from './settings.js';

export async function openClient(settings: Settings): Promise<SvcClient> {
  const { createClient } = await import('@svcplatform/sdk');
  return createClient({
    baseUrl: settings.baseUrl,
    token: settings.token,
    userAgent: `svcctl/${cliVersion()}`,
  });
}
