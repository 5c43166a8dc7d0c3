/**
 * A small cache of authorization answers: each kept for a fixed time, at most `maxEntries` of
 * them (the oldest goes first). Short-lived on purpose: a RoleBinding that is removed must stop
 * counting within seconds, as it does in kube-apiserver's own authorizer, which reads RBAC from
 * an informer and caches nothing.
 */
export class AnswerCache<T> {
  readonly #entries = new Map<string, { value: T; expiresAt: number }>();

  constructor(
    readonly ttlMs: number,
    readonly maxEntries: number,
    readonly now: () => number = () => performance.now(),
  ) {}

  get size(): number {
    return this.#entries.size;
  }

  get(key: string): T | undefined {
    const entry = this.#entries.get(key);
    if (!entry) return undefined;
    if (entry.expiresAt > this.now()) return entry.value;
    this.#entries.delete(key);
    return undefined;
  }

  set(key: string, value: T): void {
    this.#entries.delete(key);
    this.#entries.set(key, { value, expiresAt: this.now() + this.ttlMs });
    // Insertion order is age order: the first key is the oldest.
    while (this.#entries.size > this.maxEntries) this.#entries.delete(this.#entries.keys().next().value!);
  }
}
