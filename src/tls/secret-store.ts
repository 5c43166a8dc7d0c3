/**
 * Generated material in a Secret shared by all replicas. Creation is create-if-absent and an
 * AlreadyExists means another replica won: its material is adopted. Updates carry the
 * resourceVersion they were based on. A Secret without our managed-by label belongs to the user
 * and is never written.
 */
import { entriesToMaterial, materialToEntries, type GeneratedMaterial } from './generated-material.js';
import { MaterialStoreError, type MaterialStore, type StoredMaterial, type WriteOutcome } from './material-store.js';
import { MANAGED_BY_LABEL, MANAGED_BY_VALUE, SecretApiError, TLS_SECRET_TYPE, type SecretApi, type SecretRecord } from './secret-api.js';

export class SecretMaterialStore implements MaterialStore {
  readonly description: string;
  /** Labels of the last record read, so that a replace keeps labels others added. */
  private lastLabels: Record<string, string> = {};
  /** Owners of the last record read, so that a replace keeps them (the leader sets the install's). */
  private lastOwners: SecretRecord['ownerReferences'] = undefined;

  constructor(
    private readonly api: SecretApi,
    private readonly name: string,
    namespace: string,
  ) {
    this.description = `Secret ${namespace}/${name}`;
  }

  async read(signal: AbortSignal): Promise<StoredMaterial | undefined> {
    const record = await this.api.read(this.name, signal);
    if (!record) return undefined;
    if (record.labels[MANAGED_BY_LABEL] !== MANAGED_BY_VALUE) {
      throw new MaterialStoreError(
        `${this.description} exists but is not labelled ${MANAGED_BY_LABEL}=${MANAGED_BY_VALUE}: it is left untouched; ` +
          'delete it, label it, or use --tls-mode files to serve it',
      );
    }
    if (record.type !== TLS_SECRET_TYPE) {
      throw new MaterialStoreError(
        `${this.description} has type ${record.type}, expected ${TLS_SECRET_TYPE}: delete it so that it can be recreated`,
      );
    }
    this.lastLabels = record.labels;
    this.lastOwners = record.ownerReferences;
    return { material: entriesToMaterial(record.data), version: record.resourceVersion };
  }

  async write(material: GeneratedMaterial, basis: StoredMaterial | undefined, signal: AbortSignal): Promise<WriteOutcome> {
    const record: SecretRecord = {
      name: this.name,
      type: TLS_SECRET_TYPE,
      labels: { ...(basis ? this.lastLabels : {}), [MANAGED_BY_LABEL]: MANAGED_BY_VALUE },
      data: materialToEntries(material),
      ...(basis && this.lastOwners ? { ownerReferences: this.lastOwners } : {}),
    };
    try {
      if (!basis) await this.api.create(record, signal);
      else await this.api.replace({ ...record, resourceVersion: basis.version }, signal);
      return 'written';
    } catch (error) {
      // Lost a race (created, changed or deleted by someone else): the caller reads and decides again.
      if (error instanceof SecretApiError && ['AlreadyExists', 'Conflict', 'NotFound'].includes(error.reason)) return 'conflict';
      throw error;
    }
  }
}
