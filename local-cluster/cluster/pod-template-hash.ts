/**
 * The pod-template-hash label of a Deployment's ReplicaSets: an FNV-32a hash of the pod template
 * (and the collision count), printed in decimal and mapped onto utilrand's alphabet, as
 * controller.ComputeHash does. kube-controller-manager hashes Go's printed struct, so the values
 * differ from a real cluster's; their shape and stability (same template, same hash) do not.
 */
const ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';

function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

function fnv32a(text: string): number {
  let hash = 0x811c9dc5;
  for (const byte of Buffer.from(text, 'utf8')) {
    hash ^= byte;
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash >>> 0;
}

/** rand.SafeEncodeString: every character of the decimal hash mapped onto the alphabet. */
function safeEncode(text: string): string {
  return [...text].map((c) => ALPHABET[c.charCodeAt(0) % ALPHABET.length]).join('');
}

export function podTemplateHash(template: unknown, collisionCount = 0): string {
  return safeEncode(String(fnv32a(`${canonical(template)}#${collisionCount}`)));
}
