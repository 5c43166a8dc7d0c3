/** A rendered Kubernetes object as plain data: only the envelope is typed, the rest is read by path. */
export interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: {
    name: string;
    namespace?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
  };
  [field: string]: unknown;
}

export function isKubeObject(value: unknown): value is KubeObject {
  if (typeof value !== 'object' || value === null) return false;
  const candidate = value as Partial<KubeObject>;
  return (
    typeof candidate.apiVersion === 'string' &&
    typeof candidate.kind === 'string' &&
    typeof candidate.metadata === 'object' &&
    candidate.metadata !== null &&
    typeof candidate.metadata.name === 'string'
  );
}

/** The one object of `kind` named `name`; throws (naming what exists) when absent or ambiguous. */
export function findObject(objects: readonly KubeObject[], kind: string, name: string): KubeObject {
  const matches = objects.filter((o) => o.kind === kind && o.metadata.name === name);
  if (matches.length !== 1) {
    const present = objects.map((o) => `${o.kind}/${o.metadata.name}`).join(', ');
    throw new Error(`expected exactly one ${kind}/${name}, found ${matches.length} (rendered: ${present})`);
  }
  return matches[0]!;
}

export function objectsOfKind(objects: readonly KubeObject[], kind: string): KubeObject[] {
  return objects.filter((o) => o.kind === kind);
}
