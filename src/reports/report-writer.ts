import { createHash } from 'node:crypto';
import type { Logger } from 'pino';
import { describeApiFailure, isNotFound } from '../kube/api-errors.js';
import { canonicalJson } from '../util/canonical-json.js';
import type { ReportClient } from './report-client.js';
import type { ReportObject } from './report-objects.js';
import type { WriteRate } from './write-rate.js';

/**
 * What the writer knows of a stored report: the digest of the JSON it wrote (`written`), or, for
 * one read from the cluster, the digest of its content key order aside (`read`), which is worked
 * out for what would be written only then, once.
 */
interface Stored {
  written?: string;
  read?: string;
  resourceVersion: string;
}

const hashOf = (json: string): string => createHash('sha256').update(json).digest('base64');

/** What is counted of the writes. */
export interface WriteCounts {
  written(verb: 'create' | 'update' | 'delete'): void;
}

/** The fields of a report that decide whether it must be written again, whatever the key order the API server keeps. */
function digestOf(body: Record<string, unknown>): string {
  const metadata = (body['metadata'] ?? {}) as Record<string, unknown>;
  const comparable = {
    apiVersion: body['apiVersion'],
    kind: body['kind'],
    metadata: { name: metadata['name'], namespace: metadata['namespace'], labels: metadata['labels'], ownerReferences: metadata['ownerReferences'] },
    source: body['source'],
    summary: body['summary'],
    results: body['results'],
  };
  return createHash('sha256').update(canonicalJson(comparable)).digest('base64');
}

/**
 * The install's reports in the cluster as the writer last saw or wrote them, a digest each, and
 * the writes that bring a namespace's reports to what is desired: a report is written only when
 * its digest differs, one no longer desired is deleted, each write waits for its token.
 */
export class ReportWriter {
  readonly #client: ReportClient;
  readonly #rate: WriteRate;
  readonly #counts: WriteCounts;
  readonly #logger: Logger;
  /** namespace -> report name -> what is stored: its digest and resourceVersion. */
  readonly #known = new Map<string, Map<string, Stored>>();

  constructor(client: ReportClient, rate: WriteRate, counts: WriteCounts, logger: Logger) {
    this.#client = client;
    this.#rate = rate;
    this.#counts = counts;
    this.#logger = logger;
  }

  /** How many reports the install has in the cluster, as far as the writer knows. */
  get size(): number {
    let n = 0;
    for (const names of this.#known.values()) n += names.size;
    return n;
  }

  /** The namespaces that hold reports of the install ('' for the cluster-scoped ones). */
  namespaces(): string[] {
    return [...this.#known.keys()];
  }

  /** Reads the install's reports (a new leader resumes from them: what is stored as it would write it is not written again). */
  async readExisting(labelSelector: string, signal: AbortSignal): Promise<void> {
    this.#known.clear();
    for await (const report of this.#client.list(labelSelector, signal)) this.#remember(report.namespace, report.name, { read: digestOf(report.body), resourceVersion: report.resourceVersion });
  }

  /** Brings the reports of `namespace` to `desired`; resolves with the number of writes it took. */
  async sync(namespace: string, desired: readonly ReportObject[], signal: AbortSignal): Promise<number> {
    let writes = 0;
    const wanted = new Set(desired.map((report) => report.name));
    for (const report of desired) {
      const written = hashOf(report.json);
      const stored = this.#known.get(namespace)?.get(report.name);
      if (stored && this.#same(stored, written, report)) continue;
      await this.#rate.take(signal);
      const resourceVersion = await this.#write(namespace, report, stored?.resourceVersion, signal);
      this.#remember(namespace, report.name, { written, resourceVersion });
      writes++;
    }
    for (const name of [...(this.#known.get(namespace)?.keys() ?? [])]) {
      if (wanted.has(name)) continue;
      await this.#rate.take(signal);
      await this.#delete(namespace, name, signal);
      writes++;
    }
    return writes;
  }

  /**
   * Create or replace; resolves with the stored resourceVersion. A report someone deleted is
   * created again; one that exists already, or changed since it was read (409), is read again and
   * replaced.
   */
  async #write(namespace: string, report: ReportObject, resourceVersion: string | undefined, signal: AbortSignal): Promise<string> {
    if (resourceVersion !== undefined) {
      try {
        return await this.#replace(namespace, report, resourceVersion, signal);
      } catch (error) {
        if (isNotFound(error)) return await this.#create(namespace, report, signal);
        if (describeApiFailure(error).code !== 409) throw error;
      }
      return await this.#replace(namespace, report, (await this.#client.read(namespace, report.name, signal)).resourceVersion, signal);
    }
    try {
      return await this.#create(namespace, report, signal);
    } catch (error) {
      if (describeApiFailure(error).code !== 409) throw error;
      return await this.#replace(namespace, report, (await this.#client.read(namespace, report.name, signal)).resourceVersion, signal);
    }
  }

  async #create(namespace: string, report: ReportObject, signal: AbortSignal): Promise<string> {
    const resourceVersion = await this.#client.create(namespace, report.json, signal);
    this.#counts.written('create');
    return resourceVersion;
  }

  async #replace(namespace: string, report: ReportObject, resourceVersion: string, signal: AbortSignal): Promise<string> {
    const updated = await this.#client.replace(namespace, report.name, report.json, resourceVersion, signal);
    this.#counts.written('update');
    return updated;
  }

  async #delete(namespace: string, name: string, signal: AbortSignal): Promise<void> {
    try {
      await this.#client.delete(namespace, name, signal);
      this.#counts.written('delete');
    } catch (error) {
      if (!isNotFound(error)) throw error;
      this.#logger.debug({ report: name, namespace }, 'report already gone');
    }
    const names = this.#known.get(namespace);
    names?.delete(name);
    if (names?.size === 0) this.#known.delete(namespace);
  }

  /** Whether `stored` holds what `report` says; a report read from the cluster found so is known by its written digest from then on. */
  #same(stored: Stored, written: string, report: ReportObject): boolean {
    if (stored.written !== undefined) return stored.written === written;
    if (stored.read !== digestOf(JSON.parse(report.json) as Record<string, unknown>)) return false;
    stored.written = written;
    delete stored.read;
    return true;
  }

  #remember(namespace: string, name: string, stored: Stored): void {
    let names = this.#known.get(namespace);
    if (!names) this.#known.set(namespace, (names = new Map()));
    names.set(name, stored);
  }
}
