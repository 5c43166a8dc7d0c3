/** Where generated material persists: a Secret in a cluster, --cert-dir locally. */
import type { GeneratedMaterial, PersistedMaterial } from './generated-material.js';

export interface StoredMaterial {
  material: PersistedMaterial;
  /** Opaque concurrency token (a resourceVersion); undefined for stores without one. */
  version: string | undefined;
}

/** 'conflict': someone else wrote first; read again and decide again. */
export type WriteOutcome = 'written' | 'conflict';

export interface MaterialStore {
  /** For logs and errors, e.g. `Secret ns/name` or a directory. */
  readonly description: string;
  /** What is persisted, or undefined when nothing is. Throws when the content is not ours to use. */
  read(signal: AbortSignal): Promise<StoredMaterial | undefined>;
  /** Writes `material` over `basis` (undefined: create, it must not exist yet). */
  write(material: GeneratedMaterial, basis: StoredMaterial | undefined, signal: AbortSignal): Promise<WriteOutcome>;
  /** True once what it holds was written nowhere but this process's memory (ReadOnlyMaterialStore). */
  readonly keptNowhere?: boolean;
}

/** A store refused material it does not own or cannot use; retrying does not help. */
export class MaterialStoreError extends Error {
  override readonly name = 'MaterialStoreError';
}
