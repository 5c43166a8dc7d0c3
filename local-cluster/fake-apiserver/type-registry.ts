/**
 * The resource types one double knows: the built-in ones, plus those its
 * CustomResourceDefinitions add while it runs. The store's registry has one type per stored
 * resource (a CRD's storage version); a kube-apiserver's registry (`serving`) adds what it serves
 * besides: every served version of the CRDs in its cache.
 */
import { BUILTIN_TYPES } from './builtin-types.js';
import type { ResourceName, ResourceType } from './resources.js';

export class TypeRegistry {
  readonly #byKey = new Map<ResourceName, ResourceType>();
  /** Every group/version/resource served; the stored types unless given. */
  readonly #served: readonly ResourceType[] | undefined;

  constructor(types: readonly ResourceType[] = BUILTIN_TYPES, served?: readonly ResourceType[]) {
    for (const type of types) this.#byKey.set(type.key, type);
    this.#served = served;
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
    return this.served().find((type) => type.group === group && type.version === version && type.resource === resource);
  }

  /** By group and kind, for ownerReferences and events (any served version). */
  forKind(group: string, kind: string): ResourceType | undefined {
    for (const type of this.#byKey.values()) if (type.group === group && type.kind === kind) return type;
    return undefined;
  }

  /** By group, version and kind (a paramKind), among the served versions. */
  forVersionKind(group: string, version: string, kind: string): ResourceType | undefined {
    return this.served().find((type) => type.group === group && type.version === version && type.kind === kind);
  }

  /** The types a kube-apiserver of this minor release serves (discovery and routing of the claimed version). */
  servedAt(minor: number): TypeRegistry {
    const since = (type: ResourceType): boolean => type.sinceMinor === undefined || type.sinceMinor <= minor;
    return new TypeRegistry(this.all().filter(since), this.#served?.filter(since));
  }

  /** This registry's built-in types served with `custom` (one kube-apiserver's view of the CRDs). */
  serving(custom: readonly ResourceType[]): TypeRegistry {
    const builtIn = this.all().filter((type) => !type.custom);
    return new TypeRegistry(builtIn, [...builtIn, ...custom]);
  }

  /** One type per stored resource. */
  all(): ResourceType[] {
    return [...this.#byKey.values()];
  }

  /** Every served group/version/resource (discovery, routing). */
  served(): readonly ResourceType[] {
    return this.#served ?? this.all();
  }

  add(type: ResourceType): void {
    this.#byKey.set(type.key, type);
  }

  remove(key: ResourceName): void {
    this.#byKey.delete(key);
  }
}
