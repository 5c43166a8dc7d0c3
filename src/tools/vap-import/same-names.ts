import { isDeepStrictEqual } from 'node:util';
import { describe, type Sourced } from './objects.js';
import type { ImportProblem } from './problems.js';

/** The objects of one kind that may be imported, and the names given twice with different specs. */
export interface NamedObjects<S> {
  /** One object per name: a name given twice with the same spec counts once. */
  usable: Sourced<S>[];
  /** Name -> how the reports name the objects that hold it. */
  conflicts: Map<string, string>;
}

/**
 * A cluster holds one ValidatingAdmissionPolicy (or binding) of a name: two in the input with the
 * same name and different specs cannot both run (the later apply replaces the earlier, a create of
 * the second is refused), and which one the user means is theirs to say. Each is reported naming
 * the other, and neither is imported; the same object given twice is taken once.
 */
export function sameNames<S>(objects: readonly Sourced<S>[], problems: ImportProblem[]): NamedObjects<S> {
  const byName = new Map<string, Sourced<S>[]>();
  for (const object of objects) byName.set(object.name, [...(byName.get(object.name) ?? []), object]);
  const usable: Sourced<S>[] = [];
  const conflicts = new Map<string, string>();
  for (const [name, group] of byName) {
    const first = group[0]!;
    const different = group.filter((other) => !isDeepStrictEqual(other.spec, first.spec));
    if (different.length === 0) {
      usable.push(first);
      continue;
    }
    conflicts.set(name, [first, ...different].map(describe).join(' and '));
    for (const other of different) {
      problems.push({
        object: describe(other),
        field: 'metadata.name',
        problem: `also the name of ${describe(first)}, whose spec differs: a cluster holds one ${first.object.kind} of a name (a later apply replaces the earlier, a second create is refused), so which one runs is unknown; give only the one the cluster runs`,
        effect: 'not imported',
      });
    }
  }
  return { usable, conflicts };
}
