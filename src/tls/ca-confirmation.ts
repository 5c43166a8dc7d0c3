/**
 * When a new CA counts as trusted by callers, so that serving material may move to it. Where this
 * server registers its webhooks, only the live configurations can say so: the lifecycle wires in
 * a reader of their caBundles (tls never talks to the API itself). Without a cluster nothing is
 * registered, so a new CA counts at once; with --no-register someone else publishes the bundle,
 * and a fixed propagation time after the CA's publication is all there is to go by.
 */
import type { X509Certificate } from 'node:crypto';
import type { Logger } from 'pino';
import { BACKDATE_MS } from './backdate.js';
import type { PersistedMaterial } from './generated-material.js';
import { isIssuedBy, notBefore, parseCertificates } from './pem.js';

/** SHA-256 fingerprints (X509Certificate.fingerprint256) of the CAs that every live webhook configuration trusts. */
export type TrustedCaReader = (signal: AbortSignal) => Promise<ReadonlySet<string>>;

export type CaConfirmation =
  | { kind: 'immediate' }
  | { kind: 'after-propagation' }
  | { kind: 'live'; trustedCas: TrustedCaReader; /** Poll of the live configurations while a CA waits. */ pollMs: number };

/** The `caConfirmed` rule of one renewal check; reads the live configurations only when a move waits on them. */
export async function caConfirmationRule(
  confirmation: CaConfirmation,
  material: PersistedMaterial | undefined,
  now: Date,
  propagationMs: number,
  signal: AbortSignal,
  logger: Logger,
): Promise<(ca: X509Certificate) => boolean> {
  switch (confirmation.kind) {
    case 'immediate':
      return () => true;
    case 'after-propagation':
      // Issued with NotBefore backdated: it was published at NotBefore + the backdate.
      return (ca) => now.getTime() - (notBefore(ca).getTime() + BACKDATE_MS) >= propagationMs;
    case 'live': {
      if (!awaitsConfirmation(material)) return () => false;
      const trusted = await confirmation.trustedCas(signal).catch((error: unknown) => {
        if (signal.aborted) throw error;
        logger.warn({ reason: (error as Error).message }, 'could not read the CAs of the live webhook configurations; the serving certificate stays with its CA');
        return new Set<string>();
      });
      return (ca) => trusted.has(ca.fingerprint256);
    }
  }
}

/** A next CA is waiting, or the leaf is not (yet) signed by the CA (material from before next CAs existed). */
function awaitsConfirmation(material: PersistedMaterial | undefined): boolean {
  if (material?.nextCaCertPem !== undefined) return true;
  try {
    const [leaf] = parseCertificates(material?.certPem ?? '');
    const [ca] = parseCertificates(material?.caCertPem ?? '');
    return leaf !== undefined && ca !== undefined && !isIssuedBy(leaf, ca);
  } catch {
    return false;
  }
}
