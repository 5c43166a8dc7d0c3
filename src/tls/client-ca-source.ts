/**
 * The CA bundle for client authentication (--client-ca): one file, validated and reloaded like
 * the serving material; a valid change is announced as `client-ca-change`.
 */
import { EventEmitter } from 'node:events';
import { basename, dirname } from 'node:path';
import type { Logger } from 'pino';
import { OwnedFileWatch, readSnapshot, type FileSnapshot } from '../util/watch-files.js';
import type { TlsMetrics } from './metrics.js';
import { joinCertificates, notAfter } from './pem.js';
import type { ClientCaEvents, ClientCaSource } from './types.js';
import { parsePem } from './validate.js';

export interface ClientCaOptions {
  file: string;
  pollIntervalMs: number;
  now: () => Date;
  logger: Logger;
  metrics: TlsMetrics;
  settleMs?: number;
  useFsEvents?: boolean;
}

type ClientCaValidation = { ok: true; pem: string; notAfter: Date } | { ok: false; problems: string[] };

export class FileClientCaSource extends EventEmitter<ClientCaEvents> implements ClientCaSource {
  private pem: string | undefined;
  private digest: string | undefined;
  private readonly watch = new OwnedFileWatch();

  constructor(private readonly options: ClientCaOptions) {
    super();
  }

  async load(signal: AbortSignal): Promise<string> {
    signal.throwIfAborted();
    const snapshot = await readSnapshot(dirname(this.options.file), [basename(this.options.file)]);
    const validation = this.validate(snapshot);
    if (!validation.ok) throw new Error(`client CA is not usable: ${validation.problems.join('; ')}`);
    this.digest = snapshot.digest;
    this.use(validation);
    return validation.pem;
  }

  current(): string {
    if (this.pem === undefined) throw new Error('client CA requested before it was loaded');
    return this.pem;
  }

  start(signal: AbortSignal): void {
    this.watch.start(signal, {
      dir: dirname(this.options.file),
      files: [basename(this.options.file)],
      pollIntervalMs: this.options.pollIntervalMs,
      settleMs: this.options.settleMs,
      useFsEvents: this.options.useFsEvents,
      baselineDigest: this.digest,
      onChange: (snapshot) => this.fileChanged(snapshot),
      onError: (error) => this.options.logger.warn({ reason: (error as Error).message }, 'watching the client CA file'),
    });
  }

  stop(): Promise<void> {
    return this.watch.stop();
  }

  private fileChanged(snapshot: FileSnapshot): void {
    const validation = this.validate(snapshot);
    if (!validation.ok) {
      this.options.metrics.reloadFailed();
      this.options.logger.warn({ problems: validation.problems }, 'new client CA rejected; keeping the current one');
      return;
    }
    if (validation.pem === this.pem) return;
    this.use(validation);
    this.options.metrics.reloaded();
    this.options.logger.info({ notAfter: validation.notAfter }, 'client CA reloaded');
    this.emit('client-ca-change', validation.pem);
  }

  private validate(snapshot: FileSnapshot): ClientCaValidation {
    const file = this.options.file;
    const problems: string[] = [];
    const certs = parsePem(snapshot.contents.get(basename(file))?.toString('utf8'), file, problems);
    if (!certs) return { ok: false, problems };
    const now = this.options.now();
    const current = certs.filter((cert) => now < notAfter(cert));
    if (current.length === 0) return { ok: false, problems: [`${file}: every certificate in it has expired`] };
    const nonCa = certs.filter((cert) => !cert.ca);
    if (nonCa.length > 0) return { ok: false, problems: [`${file}: holds a certificate that is not a CA (${nonCa[0]!.subject.replace(/\n/g, ', ')})`] };
    // The earliest expiry is what the metric shows: the first point at which some clients break.
    const earliest = current.map(notAfter).reduce((a, b) => (a < b ? a : b));
    return { ok: true, pem: joinCertificates(certs), notAfter: earliest };
  }

  private use(validation: { pem: string; notAfter: Date }): void {
    this.pem = validation.pem;
    this.options.metrics.setNotAfter('client-ca', validation.notAfter);
  }
}
