/** Every change of the leader Lease's holder in the API test double, timed, for hand-over tests. */
import type { ObjectStore } from '../../../local-cluster/fake-apiserver/index.js';
import { NAME, NAMESPACE } from './cluster-harness.js';

export const LEASE_NAME = `${NAME}-leader`;

export interface HolderChange {
  /** '' when released. */
  holder: string;
  /** performance.now() when the store took the write. */
  atMs: number;
}

interface LeaseSpec {
  holderIdentity?: string;
  renewTime?: string;
}

export function leaseSpec(store: ObjectStore): LeaseSpec {
  return (store.get('leases', NAMESPACE, LEASE_NAME) as { spec?: LeaseSpec } | undefined)?.spec ?? {};
}

/** Records holder changes from now on; `stop()` ends the recording. */
export function recordLeaseHolders(store: ObjectStore): { changes: HolderChange[]; stop: () => void } {
  const changes: HolderChange[] = [];
  let last = leaseSpec(store).holderIdentity ?? '';
  const stop = store.subscribe((event) => {
    if (event.resource !== 'leases' || event.object.metadata?.name !== LEASE_NAME) return;
    const holder = (event.object as { spec?: LeaseSpec }).spec?.holderIdentity ?? '';
    if (holder === last) return;
    last = holder;
    changes.push({ holder, atMs: performance.now() });
  });
  return { changes, stop };
}
