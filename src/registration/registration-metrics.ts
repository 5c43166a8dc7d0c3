import { Counter, Gauge, type Registry } from 'prom-client';
import type { ConfigurationKind } from './configuration-api.js';

/** What a native entry registers, as the restores metric labels it (`kind`). */
export type NativeRestoreKind = 'native-policy' | 'native-binding' | 'native-params' | 'native-mutating-policy' | 'native-mutating-binding';

/** What the leader's registration and reconcile loop report; the shipped alerts read these. */
export interface RegistrationMetrics {
  setLeader(leading: boolean): void;
  /** A configuration could not be brought to the desired state, retries exhausted. */
  registrationFailed(kind: ConfigurationKind): void;
  /** A reconcile pass failed as a whole (it is retried at the next trigger or resync). */
  reconcileFailed(): void;
  /** Someone else deleted or changed a configuration (or a native entry's object) after this leader had it as desired. */
  restored(kind: ConfigurationKind | NativeRestoreKind): void;
  setUnmanaged(kind: ConfigurationKind, unmanaged: boolean): void;
  /** A new entry was registered although a ready replica did not serve it yet, the wait for it over. */
  entryCoverageTimedOut(): void;
  /** kube-apiserver's type-checking warnings on a native entry's ValidatingAdmissionPolicy (status.typeChecking), as last read. */
  setTypeCheckWarnings(policy: string, count: number): void;
}

export const REGISTRATION_METRIC_NAMES = {
  leader: 'kube_admission_leader',
  registrationErrors: 'kube_admission_registration_errors_total',
  reconcileErrors: 'kube_admission_reconcile_errors_total',
  restores: 'kube_admission_configuration_restores_total',
  unmanaged: 'kube_admission_configuration_unmanaged',
  entryCoverageTimeouts: 'kube_admission_entry_coverage_timeouts_total',
  typeCheckWarnings: 'kube_admission_native_policy_type_warnings',
} as const;

const KINDS: readonly ConfigurationKind[] = ['mutating', 'validating'];
const NATIVE_KINDS: readonly NativeRestoreKind[] = ['native-policy', 'native-binding', 'native-params', 'native-mutating-policy', 'native-mutating-binding'];

/** Registered on `registry`, every series present from the start (an alert on a rate needs a zero first). */
export function createRegistrationMetrics(registry: Registry): RegistrationMetrics {
  const names = REGISTRATION_METRIC_NAMES;
  const leader = new Gauge({ name: names.leader, help: '1 while this replica holds the Lease (and registers and reconciles), else 0', registers: [registry] });
  const registrationErrors = new Counter({
    name: names.registrationErrors,
    help: 'Webhook configurations that could not be registered or restored, retries exhausted',
    labelNames: ['kind'] as const,
    registers: [registry],
  });
  const reconcileErrors = new Counter({ name: names.reconcileErrors, help: 'Reconcile passes that failed; retried at the next trigger or resync', registers: [registry] });
  const restores = new Counter({
    name: names.restores,
    help: 'Webhook configurations (and native entries\' ValidatingAdmissionPolicies, bindings, params ConfigMaps) put back after someone else deleted or changed them',
    labelNames: ['kind'] as const,
    registers: [registry],
  });
  const unmanaged = new Gauge({
    name: names.unmanaged,
    help: '1 while a configuration carries kube-admission-server.io/unmanaged=true and is left alone',
    labelNames: ['kind'] as const,
    registers: [registry],
  });
  const entryCoverageTimeouts = new Counter({
    name: names.entryCoverageTimeouts,
    help: 'Registrations of new entries made past the wait for every ready replica to serve them (calls to a lagging replica get 503 until it does)',
    registers: [registry],
  });
  const typeCheckWarnings = new Gauge({
    name: names.typeCheckWarnings,
    help: 'Expression warnings kube-apiserver wrote in status.typeChecking of a native entry\'s ValidatingAdmissionPolicy, as the leader last read them',
    labelNames: ['policy'] as const,
    registers: [registry],
  });
  leader.set(0);
  reconcileErrors.inc(0);
  entryCoverageTimeouts.inc(0);
  for (const kind of KINDS) {
    registrationErrors.inc({ kind }, 0);
    restores.inc({ kind }, 0);
    unmanaged.set({ kind }, 0);
  }
  for (const kind of NATIVE_KINDS) restores.inc({ kind }, 0);
  return {
    setLeader: (leading) => leader.set(leading ? 1 : 0),
    registrationFailed: (kind) => registrationErrors.inc({ kind }),
    reconcileFailed: () => reconcileErrors.inc(),
    restored: (kind) => restores.inc({ kind }),
    setUnmanaged: (kind, value) => unmanaged.set({ kind }, value ? 1 : 0),
    entryCoverageTimedOut: () => entryCoverageTimeouts.inc(),
    setTypeCheckWarnings: (policy, count) => typeCheckWarnings.set({ policy }, count),
  };
}
