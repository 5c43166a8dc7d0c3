/** cel-go's ext.Sets (Kubernetes 1.29): list-as-set tests with CEL equality. */
import type { Environment } from '@marcbachmann/cel-js';
import { celEquals } from './equality.js';
import { namespaceType } from './errors.js';

const contains = (list: readonly unknown[], item: unknown) => list.some((member) => celEquals(member, item));

export function registerSets(env: Environment): void {
  const { typeName, value } = namespaceType('sets');
  env.registerType(typeName, value.constructor as new () => object);
  env.registerConstant('sets', typeName, value);
  // list<dyn> rather than list<T>: cel-go dispatches on the list, not on its elements' types
  // (`sets.contains([1], [dyn(1.0)])` is true there); the element types are compared at load
  // by engine/sets-calls.ts, as cel-go's list(T), list(T) does.
  env.registerFunction(`${typeName}.contains(list, list): bool`, (_: unknown, a: unknown[], b: unknown[]) => b.every((item) => contains(a, item)));
  env.registerFunction(`${typeName}.equivalent(list, list): bool`, (_: unknown, a: unknown[], b: unknown[]) => b.every((item) => contains(a, item)) && a.every((item) => contains(b, item)));
  env.registerFunction(`${typeName}.intersects(list, list): bool`, (_: unknown, a: unknown[], b: unknown[]) => b.some((item) => contains(a, item)));
}
