// The ingress's certificates by SNI: a SecureContext per stored certificate, made once and kept while
// its row is unchanged (keyed by updated_at), so a reload after an unrelated change costs nothing and a
// handshake costs a map lookup. An exact name wins over the one-level wildcard covering it.
import tls from 'node:tls';
import type { SecretBox } from '../../secrets/secret-box.js';
import type { CertificateRow } from './state.js';

interface Entry {
  version: number;
  context: tls.SecureContext;
}

export class CertificateContexts {
  #byName = new Map<string, Entry>();

  constructor(
    private readonly box: SecretBox,
    private readonly warn: (fields: object, message: string) => void,
  ) {}

  /** Replaces the set with `rows`; a row whose key does not open or whose PEM is refused is left out. */
  async update(rows: CertificateRow[]): Promise<void> {
    const next = new Map<string, Entry>();
    for (const row of rows) {
      const version = row.updated_at.getTime();
      const kept = this.#byName.get(row.hostname);
      if (kept && kept.version === version) {
        next.set(row.hostname, kept);
        continue;
      }
      try {
        const key = await this.box.openText('tls-key', row.private_key_sealed);
        next.set(row.hostname, {
          version,
          context: tls.createSecureContext({ cert: row.certificate_pem, key }),
        });
      } catch (err) {
        this.warn(
          { hostname: row.hostname, err: (err as Error).message },
          'ingress cannot load a certificate',
        );
      }
    }
    this.#byName = next;
  }

  /** The context for an SNI name: exact, else `*.` and the name without its first label. */
  lookup(servername: string): tls.SecureContext | undefined {
    const name = servername.toLowerCase().replace(/\.$/, '');
    const exact = this.#byName.get(name);
    if (exact) return exact.context;
    const dot = name.indexOf('.');
    return dot > 0 ? this.#byName.get(`*${name.slice(dot)}`)?.context : undefined;
  }
}
