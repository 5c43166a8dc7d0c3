/** Certificate metrics, registered on the Registry the caller owns. */
import { Counter, Gauge, type Registry } from 'prom-client';

export type CertificateRole = 'serving' | 'ca' | 'client-ca';

export interface TlsMetrics {
  setNotAfter(certificate: CertificateRole, notAfter: Date): void;
  /** New material took effect. */
  reloaded(): void;
  /** New material was rejected or could not be produced; the old stays in force. */
  reloadFailed(): void;
}

/**
 * Creates (or, on a registry that already has them, reuses) the metrics, so that several sources
 * (serving material, client CA) can share one registry.
 */
export function createTlsMetrics(registry: Registry): TlsMetrics {
  const notAfter = reuse(registry, 'kube_admission_certificate_not_after_seconds', () =>
    new Gauge({
      name: 'kube_admission_certificate_not_after_seconds',
      help: 'NotAfter of the certificate in force, as Unix time in seconds',
      labelNames: ['certificate'] as const,
      registers: [registry],
    }),
  );
  const reloads = reuse(registry, 'kube_admission_certificate_reloads_total', () =>
    new Counter({
      name: 'kube_admission_certificate_reloads_total',
      help: 'Certificate material that took effect after start (rotation, renewal, CA change)',
      registers: [registry],
    }),
  );
  const reloadErrors = reuse(registry, 'kube_admission_certificate_reload_errors_total', () =>
    new Counter({
      name: 'kube_admission_certificate_reload_errors_total',
      help: 'Certificate reloads or renewals that failed; the previous material stayed in force',
      registers: [registry],
    }),
  );
  return {
    setNotAfter: (certificate, date) => notAfter.set({ certificate }, Math.floor(date.getTime() / 1000)),
    reloaded: () => reloads.inc(),
    reloadFailed: () => reloadErrors.inc(),
  };
}

function reuse<T>(registry: Registry, name: string, create: () => T): T {
  return (registry.getSingleMetric(name) as T | undefined) ?? create();
}
