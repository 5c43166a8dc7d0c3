/**
 * Shared helpers for the tls tests: certificates on demand (made by test/support/tls/cert-builder.ts,
 * never by src/), a capturing logger, metrics readers.
 */
import { X509Certificate } from 'node:crypto';
import { Writable } from 'node:stream';
import { pino, type Logger } from 'pino';
import { Registry } from 'prom-client';
import { LOG_BASE } from '../../../src/lifecycle/logger.js';
import { createTlsMetrics, type TlsMetrics } from '../../../src/tls/metrics.js';
import { readLogLine } from '../logs/log-lines.js';
import { buildCertificate, generateTestKey, type CertificateAndKey, type TestKeyType } from './cert-builder.js';

export type { CertificateAndKey, TestKeyType } from './cert-builder.js';

export const DAY_MS = 24 * 60 * 60 * 1000;
/** Fixtures start one hour before `now`, as issuers do for clocks running slightly behind. */
export const FIXTURE_BACKDATE_MS = 60 * 60 * 1000;

/** Names for a leaf's subjectAltName. */
export interface FixtureSans {
  dnsNames: readonly string[];
  ipAddresses: readonly string[];
}

export interface FixtureOptions {
  /** Key type and PEM encoding; default RSA in PKCS#8. */
  key?: TestKeyType;
  /** Default: `now` minus one hour. */
  notBefore?: Date;
}

/** A self-signed CA valid from an hour before `now` for `validityDays`. */
export async function makeCa(now = new Date(), validityDays = 365, commonName = 'test CA', options: FixtureOptions = {}): Promise<CertificateAndKey> {
  const keyPem = await generateTestKey(options.key ?? 'rsa-pkcs8');
  const notBefore = options.notBefore ?? new Date(now.getTime() - FIXTURE_BACKDATE_MS);
  const certPem = await buildCertificate({ commonName, notBefore, notAfter: new Date(now.getTime() + validityDays * DAY_MS), ca: true }, keyPem);
  return { certPem, keyPem };
}

/** A serving leaf signed by `ca`, from an hour before `now` for `validityDays`, never past the CA's NotAfter. */
export async function makeLeaf(
  ca: CertificateAndKey,
  sans: FixtureSans,
  now = new Date(),
  validityDays = 90,
  options: FixtureOptions = {},
): Promise<CertificateAndKey> {
  const keyPem = await generateTestKey(options.key ?? 'rsa-pkcs8');
  const caNotAfter = new Date(new X509Certificate(ca.certPem).validTo).getTime();
  const certPem = await buildCertificate(
    {
      commonName: sans.dnsNames[0] ?? 'leaf',
      notBefore: options.notBefore ?? new Date(now.getTime() - FIXTURE_BACKDATE_MS),
      notAfter: new Date(Math.min(now.getTime() + validityDays * DAY_MS, caNotAfter)),
      hosts: [...sans.dnsNames, ...sans.ipAddresses],
      issuer: ca,
    },
    keyPem,
  );
  return { certPem, keyPem };
}

export function x509(pem: string): X509Certificate {
  return new X509Certificate(pem);
}

/** A pino logger with the server's base fields whose lines are kept (parsed) for assertions, each read strictly (log-lines.ts). */
export function capturingLogger(): { logger: Logger; lines: Record<string, unknown>[]; text: () => string } {
  const raw: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      const lines = chunk.toString('utf8').split('\n').filter((line) => line !== '');
      for (const line of lines) readLogLine(line, 'an in-process logger');
      raw.push(...lines);
      callback();
    },
  });
  const logger = pino({ level: 'debug', base: LOG_BASE }, stream);
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
