/**
 * Material read from another store but never written to it: what it would write is kept in this
 * process's memory instead. `render` without --cert-dir uses it over ./certs, so that printing the
 * configurations reuses a CA already there and leaves no key material behind.
 */
import type { GeneratedMaterial } from './generated-material.js';
import type { MaterialStore, StoredMaterial, WriteOutcome } from './material-store.js';

export class ReadOnlyMaterialStore implements MaterialStore {
  readonly description: string;
  readonly #under: MaterialStore;
  #kept: StoredMaterial | undefined;

  constructor(under: MaterialStore) {
    this.#under = under;
    this.description = `${under.description} (read only: new material is kept in memory)`;
  }

  /** Whether material was made that exists in memory only (nothing usable was there to read). */
  get keptNowhere(): boolean {
    return this.#kept !== undefined;
  }

  async read(signal: AbortSignal): Promise<StoredMaterial | undefined> {
    return this.#kept ?? (await this.#under.read(signal));
  }

  async write(material: GeneratedMaterial, _basis: StoredMaterial | undefined, _signal: AbortSignal): Promise<WriteOutcome> {
    this.#kept = { material: { ...material }, version: undefined };
    return 'written';
  }
}
