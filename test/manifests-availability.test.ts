// Every install's availability numbers agree with each other (test/support/manifests/availability.ts
// says how, from Kubernetes' own rules): at every replica count it can run, on clusters of any
// size, every replica schedules, a drain can always evict one replica at a time, and a rollout can
// always move. The high-availability component and the chart's autoscaling values alike, and the
// two render the same numbers.
import t from 'tap';
import { fileURLToPath } from 'node:url';
import { findObject, type KubeObject } from '../local-cluster/util/kube-object.js';
import { availabilityProblems, disruptionsAllowed } from './support/manifests/availability.js';
import { renderWithComponents } from './support/manifests/components.js';
import { renderChart, renderInstalls } from './support/manifests/installs.js';
import { asDeployment, podSpecOf } from './support/manifests/workload.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const NAME = 'kube-admission-server';
const CHART_HIGH_AVAILABILITY = { autoscaling: { enabled: true } };

t.test('the disruption controller’s arithmetic, against its documented cases', async (t) => {
  // kubernetes.io/docs/tasks/run-application/configure-pdb: 3 replicas, maxUnavailable 1 -> 1 allowed.
  t.equal(disruptionsAllowed({ maxUnavailable: 1 }, 3, 3), 1);
  t.equal(disruptionsAllowed({ maxUnavailable: 1 }, 9, 3), 0, 'six Pending replicas count as expected, not healthy');
  t.equal(disruptionsAllowed({ minAvailable: 2 }, 9, 3), 1, 'an integer minAvailable ignores the expected count');
  t.equal(disruptionsAllowed({ maxUnavailable: '34%' }, 9, 9), 4, 'percentages round up');
});

t.test('the checker finds a contradiction the manifests once had: hard anti-affinity, up to 9 replicas, maxUnavailable 1', async (t) => {
  const objects = [
    {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: NAME },
      spec: {
        replicas: 3,
        strategy: { rollingUpdate: { maxSurge: 0, maxUnavailable: 1 } },
        template: {
          metadata: { labels: { app: NAME } },
          spec: { containers: [], affinity: { podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [{ topologyKey: 'kubernetes.io/hostname', labelSelector: { matchLabels: { app: NAME } } }] } } },
        },
      },
    },
    { apiVersion: 'autoscaling/v2', kind: 'HorizontalPodAutoscaler', metadata: { name: NAME }, spec: { minReplicas: 3, maxReplicas: 9 } },
    { apiVersion: 'policy/v1', kind: 'PodDisruptionBudget', metadata: { name: NAME }, spec: { maxUnavailable: 1 } },
  ] as unknown as KubeObject[];
  const problems = availabilityProblems(objects, NAME);
  t.ok(problems.includes('4 replicas on 3 nodes: disruptionsAllowed 0 with every scheduled replica healthy: a drain can never evict one'));
  t.ok(problems.includes('4 replicas on 3 nodes: Pending replicas with maxSurge 0: a rollout never finishes'));
});

t.test('every install, the high-availability component and the chart’s autoscaling: consistent at every replica count', async (t) => {
  const renders: [string, KubeObject[]][] = [
    ...(await renderInstalls(ROOT)).map((install) => [install.name, install.objects] as [string, KubeObject[]]),
    ['manifests/base + components/high-availability', await renderWithComponents(ROOT, ['high-availability'])],
    ['the chart with autoscaling.enabled', await renderChart(ROOT, CHART_HIGH_AVAILABILITY)],
  ];
  for (const [name, objects] of renders) t.same(availabilityProblems(objects, NAME), [], `${name}: no contradiction`);
});

t.test('the chart’s autoscaling renders the high-availability component’s numbers', async (t) => {
  const kustomize = await renderWithComponents(ROOT, ['high-availability']);
  const chart = await renderChart(ROOT, CHART_HIGH_AVAILABILITY);
  const hpaSpec = (objects: KubeObject[]) => findObject(objects, 'HorizontalPodAutoscaler', NAME)['spec'];
  t.same(hpaSpec(chart), hpaSpec(kustomize), 'the same autoscaler');
  t.same(findObject(chart, 'PodDisruptionBudget', NAME)['spec'] && (findObject(chart, 'PodDisruptionBudget', NAME)['spec'] as { maxUnavailable: unknown }).maxUnavailable, 1);
  t.same((findObject(kustomize, 'PodDisruptionBudget', NAME)['spec'] as { maxUnavailable: unknown }).maxUnavailable, 1);
  const spread = (objects: KubeObject[]) => {
    const spec = podSpecOf(asDeployment(findObject(objects, 'Deployment', NAME)));
    return spec.affinity?.podAntiAffinity?.preferredDuringSchedulingIgnoredDuringExecution?.map((term) => [term.weight, term.podAffinityTerm.topologyKey]);
  };
  t.same(spread(chart), spread(kustomize), 'the same spreading over nodes');
  t.same(spread(kustomize), [[100, 'kubernetes.io/hostname']]);
  const strategy = (objects: KubeObject[]) => asDeployment(findObject(objects, 'Deployment', NAME)).spec?.strategy;
  t.same(strategy(chart), strategy(kustomize), 'the same rollout');
  t.equal(asDeployment(findObject(chart, 'Deployment', NAME)).spec?.replicas, undefined, 'the chart leaves the count to the autoscaler (a helm upgrade must not reset it)');
});
