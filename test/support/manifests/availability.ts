/**
 * Whether an install's availability numbers agree with each other, as the scheduler, the
 * disruption controller and the deployment controller would act on them, at every replica count
 * the install can run (the Deployment's, or each one from the autoscaler's floor to its ceiling)
 * on clusters of every size from one node up. Computed here from the rendered objects,
 * independently of the manifests' comments: a drain that can never proceed (disruptionsAllowed 0
 * while every scheduled replica is healthy) or a rollout that can never finish is a problem.
 *
 * The rules, from Kubernetes:
 * - required podAntiAffinity on kubernetes.io/hostname against the install's own pods: at most
 *   one replica per node; any further replica stays Pending. Preferred terms and
 *   ScheduleAnyway spread constraints never leave a replica Pending.
 * - the disruption controller (pkg/controller/disruption): with maxUnavailable (or a percentage
 *   minAvailable) the expected count is the Deployment's scale, desiredHealthy = expected -
 *   maxUnavailable (percentages rounded up); with an integer minAvailable desiredHealthy is that
 *   number. disruptionsAllowed = max(0, currentHealthy - desiredHealthy), and Pending replicas
 *   are not healthy.
 * - the deployment controller: with maxUnavailable 0 a rollout moves only through surge pods,
 *   which must be schedulable; with Pending replicas and maxSurge 0 it can neither scale the old
 *   ReplicaSet down (available below the minimum) nor start a new pod where one fits.
 */
import type { KubeObject } from '../../../local-cluster/util/kube-object.js';
import { asDeployment, podSpecOf } from './workload.js';

type IntOrPercent = number | string;

interface Numbers {
  replicaCounts: number[];
  /** Replicas one node can hold: 1 with required anti-affinity per node, else unbounded. */
  perNode: number;
  budget: { maxUnavailable?: IntOrPercent; minAvailable?: IntOrPercent } | undefined;
  maxSurge: IntOrPercent;
  maxUnavailable: IntOrPercent;
}

const HOSTNAME = 'kubernetes.io/hostname';

const percentOf = (value: IntOrPercent, total: number, round: (n: number) => number): number =>
  typeof value === 'number' ? value : round((Number.parseInt(value, 10) * total) / 100);

const selects = (selector: Record<string, string> | undefined, labels: Record<string, string>): boolean =>
  selector !== undefined && Object.entries(selector).every(([key, value]) => labels[key] === value);

function numbersOf(objects: readonly KubeObject[], name: string): Numbers {
  const deployment = asDeployment(objects.find((o) => o.kind === 'Deployment' && o.metadata.name === name)!);
  const spec = podSpecOf(deployment);
  const labels = deployment.spec?.template.metadata?.labels ?? {};
  const required = spec.affinity?.podAntiAffinity?.requiredDuringSchedulingIgnoredDuringExecution ?? [];
  const onePerNode = required.some((term) => term.topologyKey === HOSTNAME && selects(term.labelSelector?.matchLabels, labels));
  const hpa = objects.find((o) => o.kind === 'HorizontalPodAutoscaler') as (KubeObject & { spec: { minReplicas?: number; maxReplicas: number } }) | undefined;
  const floor = hpa?.spec.minReplicas ?? 1;
  const replicaCounts = hpa ? Array.from({ length: hpa.spec.maxReplicas - floor + 1 }, (_, i) => floor + i) : [deployment.spec?.replicas ?? 1];
  const pdb = objects.find((o) => o.kind === 'PodDisruptionBudget') as (KubeObject & { spec: Numbers['budget'] }) | undefined;
  const rolling = deployment.spec?.strategy?.rollingUpdate;
  return {
    replicaCounts,
    perNode: onePerNode ? 1 : Number.POSITIVE_INFINITY,
    budget: pdb?.spec,
    maxSurge: rolling?.maxSurge ?? '25%',
    maxUnavailable: rolling?.maxUnavailable ?? '25%',
  };
}

/** What the disruption controller reports as disruptionsAllowed. */
export function disruptionsAllowed(budget: NonNullable<Numbers['budget']>, expected: number, healthy: number): number {
  const desiredHealthy =
    budget.maxUnavailable !== undefined
      ? expected - percentOf(budget.maxUnavailable, expected, Math.ceil)
      : typeof budget.minAvailable === 'number'
        ? budget.minAvailable
        : percentOf(budget.minAvailable ?? 0, expected, Math.ceil);
  return Math.max(0, healthy - desiredHealthy);
}

/** Every way the numbers contradict each other, on clusters of 1 to `maxNodes` nodes; empty when none. */
export function availabilityProblems(objects: readonly KubeObject[], name: string, maxNodes = 12): string[] {
  const numbers = numbersOf(objects, name);
  const problems: string[] = [];
  for (let nodes = 1; nodes <= maxNodes; nodes++) {
    for (const replicas of numbers.replicaCounts) {
      const at = `${replicas} replicas on ${nodes} node${nodes === 1 ? '' : 's'}`;
      const scheduled = Math.min(replicas, nodes * numbers.perNode);
      if (scheduled < replicas) problems.push(`${at}: ${replicas - scheduled} stay Pending (one per node)`);
      if (numbers.budget && replicas > 0) {
        const allowed = disruptionsAllowed(numbers.budget, replicas, scheduled);
        if (allowed === 0) problems.push(`${at}: disruptionsAllowed 0 with every scheduled replica healthy: a drain can never evict one`);
      } else if (!numbers.budget && replicas > 1) {
        problems.push(`${at}: no PodDisruptionBudget: a drain may take every replica at once`);
      }
      const surge = percentOf(numbers.maxSurge, replicas, Math.ceil);
      const unavailable = percentOf(numbers.maxUnavailable, replicas, Math.floor);
      if (unavailable === 0 && Math.min(replicas + surge, nodes * numbers.perNode) <= replicas) {
        problems.push(`${at}: maxUnavailable 0 and no room for a surge pod: a rollout never starts`);
      }
      if (scheduled < replicas && surge === 0) problems.push(`${at}: Pending replicas with maxSurge 0: a rollout never finishes`);
    }
  }
  return problems;
}
