/**
 * The resource types one double serves: the built-in ones, plus those its
 * CustomResourceDefinitions add while it runs (the store keeps one registry).
 */
import { BUILTIN_TYPES } from './builtin-types.js';
import type { ResourceName, ResourceType } from './resources.js';

export class TypeRegistry {
  readonly #byKey = new Map<ResourceName, ResourceType>();

  constructor(types: readonly ResourceType[] = BUILTIN_TYPES) {
    for (const type of types) this.#byKey.set(type.key, type);
  }

  /** The type stored under `key`; throws for an unknown key (a test's typo, or a removed CRD). */
  get(key: ResourceName): ResourceType {
    const type = this.#byKey.get(key);
    if (!type) throw new Error(`unknown resource type ${key}`);
    return type;
  }

  has(key: ResourceName): boolean {
    return this.#byKey.has(key);
  }

  /** By URL coordinates: group, version and plural. */
  find(group: string, version: string, resource: string): ResourceType | undefined {
    for (const type of this.#byKey.values()) {
      if (type.group === group && type.version === version && type.resource === resource) return type;
    }
    return undefined;
  }

  /** By group and kind, for ownerReferences and events (any served version). */
  forKind(group: string, kind: string): ResourceType | undefined {
    for (const type of this.#byKey.values()) if (type.group === group && type.kind === kind) return type;
    return undefined;
  }

  /** The types a kube-apiserver of this minor release serves (discovery and routing of the claimed version). */
  servedAt(minor: number): TypeRegistry {
    return new TypeRegistry(this.all().filter((type) => type.sinceMinor === undefined || type.sinceMinor <= minor));
  }

  all(): ResourceType[] {
    return [...this.#byKey.values()];
  }

  add(type: ResourceType): void {
    this.#byKey.set(type.key, type);
  }

  remove(key: ResourceName): void {
    this.#byKey.delete(key);
  }
}
