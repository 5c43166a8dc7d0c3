/**
 * An in-memory SecretApi that behaves like kube-apiserver for the calls generate mode makes:
 * resourceVersion bumps on every write, replace with a stale or missing resourceVersion is a 409
 * Conflict, create of an existing name is a 409 AlreadyExists, replace of a missing one a 404.
 * Every call yields to the event loop first, so concurrent callers interleave as over a network.
 */
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import { SecretApiError, type SecretApi, type SecretRecord } from '../../../src/tls/secret-api.js';

export type SecretOperation = 'read' | 'create' | 'replace';

export class MemorySecretApi implements SecretApi {
  private readonly secrets = new Map<string, SecretRecord>();
  private lastVersion = 0;
  readonly calls: { operation: SecretOperation; name: string; outcome: string }[] = [];
  /** Faults served before the real behaviour, one per matching call. */
  private readonly faults: { operation: SecretOperation; error: SecretApiError }[] = [];

  async read(name: string, signal: AbortSignal): Promise<SecretRecord | undefined> {
    await this.enter('read', name, signal);
    const record = this.secrets.get(name);
    this.calls.push({ operation: 'read', name, outcome: record ? 'found' : 'absent' });
    return record && clone(record);
  }

  async create(record: SecretRecord, signal: AbortSignal): Promise<SecretRecord> {
    await this.enter('create', record.name, signal);
    if (this.secrets.has(record.name)) {
      this.calls.push({ operation: 'create', name: record.name, outcome: 'AlreadyExists' });
      throw new SecretApiError(`secrets "${record.name}" already exists`, 'AlreadyExists', 409);
    }
    this.calls.push({ operation: 'create', name: record.name, outcome: 'created' });
    return this.store(record);
  }

  async replace(record: SecretRecord, signal: AbortSignal): Promise<SecretRecord> {
    await this.enter('replace', record.name, signal);
    const existing = this.secrets.get(record.name);
    if (!existing) {
      this.calls.push({ operation: 'replace', name: record.name, outcome: 'NotFound' });
      throw new SecretApiError(`secrets "${record.name}" not found`, 'NotFound', 404);
    }
    if (record.resourceVersion !== existing.resourceVersion) {
      this.calls.push({ operation: 'replace', name: record.name, outcome: 'Conflict' });
      throw new SecretApiError(
        `Operation cannot be fulfilled on secrets "${record.name}": the object has been modified; please apply your changes to the latest version and try again`,
        'Conflict',
        409,
      );
    }
    this.calls.push({ operation: 'replace', name: record.name, outcome: 'replaced' });
    return this.store(record);
  }

  /** Test side: put a Secret as a user (or another writer) would, bypassing the checks. */
  put(record: Omit<SecretRecord, 'resourceVersion'>): SecretRecord {
    return this.store(record);
  }

  /** Test side: the stored Secret, as the API would return it. */
  get(name: string): SecretRecord | undefined {
    const record = this.secrets.get(name);
    return record && clone(record);
  }

  delete(name: string): boolean {
    return this.secrets.delete(name);
  }

  /** The next `operation` call fails with `error` instead of running. */
  injectFault(operation: SecretOperation, error: SecretApiError): void {
    this.faults.push({ operation, error });
  }

  count(operation: SecretOperation, outcome?: string): number {
    return this.calls.filter((call) => call.operation === operation && (outcome === undefined || call.outcome === outcome)).length;
  }

  private async enter(operation: SecretOperation, name: string, signal: AbortSignal): Promise<void> {
    signal.throwIfAborted();
    await yieldToLoop();
    signal.throwIfAborted();
    const index = this.faults.findIndex((fault) => fault.operation === operation);
    if (index >= 0) {
      const [fault] = this.faults.splice(index, 1);
      this.calls.push({ operation, name, outcome: `injected ${fault!.error.reason}` });
      throw fault!.error;
    }
  }

  private store(record: Omit<SecretRecord, 'resourceVersion'>): SecretRecord {
    const stored: SecretRecord = { ...clone(record as SecretRecord), resourceVersion: String(++this.lastVersion) };
    this.secrets.set(stored.name, stored);
    return clone(stored);
  }
}

function clone(record: SecretRecord): SecretRecord {
  return { ...record, labels: { ...record.labels }, data: { ...record.data } };
}
