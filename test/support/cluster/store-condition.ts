/** Waits on the local cluster's store: a condition re-checked at every change, not a poll. */
import type { ObjectStore } from '../../../local-cluster/fake-apiserver/index.js';

/** Resolves once `check` holds (checked now and after every store event); rejects naming `what` past `timeoutMs`. */
export function storeCondition(store: ObjectStore, what: string, check: () => boolean, timeoutMs: number): Promise<void> {
  return new Promise((resolve, reject) => {
    let unsubscribe = (): void => undefined;
    const finish = (settle: () => void): void => {
      clearTimeout(timer);
      unsubscribe();
      settle();
    };
    const timer = setTimeout(() => finish(() => reject(new Error(`not within ${timeoutMs} ms: ${what}`))), timeoutMs);
    unsubscribe = store.subscribe(() => {
      if (check()) finish(resolve);
    });
    if (check()) finish(resolve);
  });
}
