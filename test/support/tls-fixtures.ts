/** Shared helpers for the tls tests: certificates on demand, a capturing logger, metrics readers. */
import { X509Certificate } from 'node:crypto';
import { Writable } from 'node:stream';
import { pino, type Logger } from 'pino';
import { Registry } from 'prom-client';
import { issueCaCertificate, issueLeafCertificate, type KeyedCertificate } from '../../src/tls/certificates.js';
import { generateRsaKey } from '../../src/tls/keys.js';
import { createTlsMetrics, type TlsMetrics } from '../../src/tls/metrics.js';
import type { SubjectAltNames } from '../../src/tls/sans.js';

export const DAY_MS = 24 * 60 * 60 * 1000;

export async function makeCa(now = new Date(), validityDays = 365, commonName = 'test CA'): Promise<KeyedCertificate> {
  const keyPem = await generateRsaKey();
  return { certPem: issueCaCertificate({ commonName, validityDays, now, keyPem }), keyPem };
}

export async function makeLeaf(
  ca: KeyedCertificate,
  sans: SubjectAltNames,
  now = new Date(),
  validityDays = 90,
): Promise<KeyedCertificate> {
  const keyPem = await generateRsaKey();
  const certPem = issueLeafCertificate({ commonName: sans.dnsNames[0] ?? 'leaf', sans, validityDays, now, keyPem, ca });
  return { certPem, keyPem };
}

export function x509(pem: string): X509Certificate {
  return new X509Certificate(pem);
}

/** A pino logger whose lines are kept (parsed) for assertions. */
export function capturingLogger(): { logger: Logger; lines: Record<string, unknown>[]; text: () => string } {
  const raw: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      raw.push(...chunk.toString('utf8').split('\n').filter((line) => line !== ''));
      callback();
    },
  });
  const logger = pino({ level: 'debug' }, stream);
  return {
    logger,
    get lines() {
      return raw.map((line) => JSON.parse(line) as Record<string, unknown>);
    },
    text: () => raw.join('\n'),
  };
}

export interface MetricsProbe {
  registry: Registry;
  metrics: TlsMetrics;
  value(name: string, labels?: Record<string, string>): Promise<number | undefined>;
}

export function metricsProbe(): MetricsProbe {
  const registry = new Registry();
  const metrics = createTlsMetrics(registry);
  return {
    registry,
    metrics,
    async value(name, labels = {}) {
      const metric = registry.getSingleMetric(name);
      if (!metric) return undefined;
      const { values } = await metric.get();
      const match = values.find((entry) => Object.entries(labels).every(([key, value]) => entry.labels[key] === value));
      return match?.value;
    },
  };
}

/** Resolves with the arguments of the next `event` on `emitter`, or rejects after `timeoutMs`. */
export function nextEvent<T extends unknown[]>(
  emitter: { once(event: string, listener: (...args: T) => void): unknown; off(event: string, listener: (...args: T) => void): unknown },
  event: string,
  timeoutMs = 10_000,
): Promise<T> {
  return new Promise((resolve, reject) => {
    const listener = (...args: T): void => {
      clearTimeout(timer);
      resolve(args);
    };
    const timer = setTimeout(() => {
      emitter.off(event, listener);
      reject(new Error(`no ${event} within ${timeoutMs} ms`));
    }, timeoutMs);
    emitter.once(event, listener);
  });
}
