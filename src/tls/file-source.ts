/**
 * Files mode: serves tls.crt / tls.key from --cert-dir (the cert-manager Secret layout, with
 * ca.crt as the bundle to register) and follows rotations of the mounted Secret. New material is
 * used only when it validates; otherwise the old stays, the problems are logged and counted, and
 * the rejected material is looked at again (see RetryTimer) until it is taken or replaced.
 */
import { EventEmitter } from 'node:events';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { OwnedFileWatch, readSnapshot, type FileSnapshot } from '../util/watch-files.js';
import type { TlsMetrics } from './metrics.js';
import { RetryTimer } from './retry-timer.js';
import { serviceHostName } from './sans.js';
import type { ServingMaterial, TlsMaterialEvents, TlsMaterialSource } from './types.js';
import { validateServingMaterial, type ServingValidation } from './validate.js';

export const SERVING_FILES = { cert: 'tls.crt', key: 'tls.key', ca: 'ca.crt' } as const;

export interface FileSourceOptions {
  certDir: string;
  serviceName: string;
  namespace: string;
  pollIntervalMs: number;
  now: () => Date;
  logger: Logger;
  metrics: TlsMetrics;
  /** Quiet time before a burst of writes counts as one change (see watchFiles). */
  settleMs?: number;
  /** False: poll only (tests of the fallback). */
  useFsEvents?: boolean;
}

export class FileMaterialSource extends EventEmitter<TlsMaterialEvents> implements TlsMaterialSource {
  private serving: ServingMaterial | undefined;
  private digest: string | undefined;
  private readonly watch = new OwnedFileWatch();
  private readonly retry: RetryTimer;
  /** Set between start() and stop(): rejected material is retried only while running. */
  private lifetime: AbortSignal | undefined;

  constructor(private readonly options: FileSourceOptions) {
    super();
    this.retry = new RetryTimer(options);
  }

  async load(signal: AbortSignal): Promise<ServingMaterial> {
    signal.throwIfAborted();
    const snapshot = await readSnapshot(this.options.certDir, Object.values(SERVING_FILES));
    const validation = this.validate(snapshot);
    if (!validation.ok) {
      throw new Error(`TLS material in ${this.options.certDir} is not usable: ${validation.problems.join('; ')}`);
    }
    this.digest = snapshot.digest;
    this.use(validation.material);
    return validation.material;
  }

  /** The mounted files are read, never written. */
  async persist(): Promise<void> {}

  current(): ServingMaterial {
    if (!this.serving) throw new Error('TLS material requested before it was loaded');
    return this.serving;
  }

  start(signal: AbortSignal): void {
    if (this.lifetime) return;
    this.lifetime = signal;
    signal.addEventListener('abort', () => this.retry.cancel(), { once: true });
    this.watch.start(signal, {
      dir: this.options.certDir,
      files: Object.values(SERVING_FILES),
      pollIntervalMs: this.options.pollIntervalMs,
      settleMs: this.options.settleMs,
      useFsEvents: this.options.useFsEvents,
      baselineDigest: this.digest,
      onChange: (snapshot) => this.filesChanged(snapshot),
      onError: (error) => this.options.logger.warn({ reason: (error as Error).message }, 'watching the TLS files'),
    });
  }

  stop(): Promise<void> {
    this.lifetime = undefined;
    this.retry.cancel();
    return this.watch.stop();
  }

  /** New content on disk: it supersedes whatever was waiting for a retry. */
  private filesChanged(snapshot: FileSnapshot): void {
    this.retry.cancel();
    this.consider(snapshot, false);
  }

  private consider(snapshot: FileSnapshot, retried: boolean): void {
    const validation = this.validate(snapshot);
    if (!validation.ok) {
      this.rejected(snapshot, validation, retried);
      return;
    }
    const previous = this.serving;
    const next = validation.material;
    const bundleChanged = next.caBundlePem !== previous?.caBundlePem;
    const servingChanged = next.certPem !== previous?.certPem || next.keyPem !== previous?.keyPem;
    if (!bundleChanged && !servingChanged) return;
    this.use(next);
    this.options.metrics.reloaded();
    this.options.logger.info(
      { bundleChanged, servingChanged, certNotAfter: next.certNotAfter, caNotAfter: next.caNotAfter, ...(retried ? { retried } : {}) },
      'TLS material reloaded from files',
    );
    if (bundleChanged) this.emit('ca-bundle-change', next.caBundlePem);
    if (servingChanged) this.emit('serving-change', next);
  }

  /** Logged and counted once per content; looked at again quietly until taken or replaced. */
  private rejected(snapshot: FileSnapshot, validation: ServingValidation & { ok: false }, retried: boolean): void {
    const retryAt = validation.validFrom;
    if (!retried) {
      this.options.metrics.reloadFailed();
      this.options.logger.warn({ problems: validation.problems, ...(retryAt ? { retryAt } : {}) }, 'new TLS material rejected; keeping the current material');
    } else {
      this.options.logger.debug({ problems: validation.problems }, 'rejected TLS material is still not usable');
    }
    if (this.lifetime && !this.lifetime.aborted) this.retry.schedule(retryAt, () => this.consider(snapshot, true));
  }

  private validate(snapshot: FileSnapshot): ServingValidation {
    const text = (name: string): string | undefined => snapshot.contents.get(name)?.toString('utf8');
    const path = (name: string): string => join(this.options.certDir, name);
    return validateServingMaterial(
      { certPem: text(SERVING_FILES.cert), keyPem: text(SERVING_FILES.key), caPem: text(SERVING_FILES.ca) },
      {
        hostName: serviceHostName(this.options.serviceName, this.options.namespace),
        now: this.options.now(),
        names: { cert: path(SERVING_FILES.cert), key: path(SERVING_FILES.key), ca: path(SERVING_FILES.ca) },
      },
    );
  }

  private use(material: ServingMaterial): void {
    this.serving = material;
    this.options.metrics.setNotAfter('serving', material.certNotAfter);
    this.options.metrics.setNotAfter('ca', material.caNotAfter);
  }
}
