import t from 'tap';
import { containersOf, describeContainer, podSpecsOf, WORKLOAD_KINDS } from '../src/admission/pod-specs.js';
import type { KubeObject } from '../src/admission/types.js';
import { cronJob, deployment, pod } from './support/policy/policy-fixtures.js';

const spec = { containers: [{ name: 'app' }] };

function withTemplate(kind: string, apiVersion: string): KubeObject {
  return { apiVersion, kind, metadata: { name: 'w' }, spec: { template: { metadata: {}, spec: structuredClone(spec) } } };
}

t.test('podSpecsOf finds the pod spec of a Pod and of every workload kind', async (t) => {
  t.same(podSpecsOf(pod(spec)).map((l) => [l.description, l.spec]), [['', spec]]);
  t.same(podSpecsOf(deployment(spec)).map((l) => [l.description, l.spec]), [['pod template of Deployment "web"', spec]]);
  t.same(podSpecsOf(cronJob(spec)).map((l) => l.description), ['pod template of CronJob "nightly"']);
  for (const [kind, apiVersion] of [['StatefulSet', 'apps/v1'], ['DaemonSet', 'apps/v1'], ['ReplicaSet', 'apps/v1'], ['Job', 'batch/v1'], ['ReplicationController', 'v1']] as const) {
    t.same(podSpecsOf(withTemplate(kind, apiVersion)).map((l) => l.spec), [spec], kind);
  }
  const template: KubeObject = { apiVersion: 'v1', kind: 'PodTemplate', metadata: { name: 't' }, template: { spec } };
  t.same(podSpecsOf(template).map((l) => l.spec), [spec]);
  t.same(WORKLOAD_KINDS.length, 8);
});

t.test('podSpecsOf returns nothing for other or malformed objects', async (t) => {
  t.same(podSpecsOf(null), []);
  t.same(podSpecsOf({ kind: 'ConfigMap', data: {} }), []);
  t.same(podSpecsOf({ kind: 'Pod' }), [], 'a Pod without spec (a status update)');
  t.same(podSpecsOf({ kind: 'Deployment', spec: { template: 'x' } }), []);
  t.same(podSpecsOf({ kind: 'CronJob', spec: { jobTemplate: { spec: null } } }), []);
});

t.test('locations are live references; metadata is created on demand', async (t) => {
  const object = deployment(spec);
  const template = (object['spec'] as { template: { metadata?: unknown } }).template;
  delete template.metadata;
  const [location] = podSpecsOf(object);
  location!.metadata()['labels'] = { a: 'b' };
  t.same(template.metadata, { labels: { a: 'b' } });
  location!.spec['hostNetwork'] = true;
  t.equal((object['spec'] as { template: { spec: { hostNetwork?: boolean } } }).template.spec.hostNetwork, true);
});

t.test('containersOf lists init, regular and ephemeral containers and names unnamed ones by index', async (t) => {
  const refs = containersOf({
    containers: [{ name: 'app' }, { image: 'x' }, 'junk'],
    initContainers: [{ name: 'setup' }],
    ephemeralContainers: [{ name: 'debug' }],
  });
  t.same(refs.map((r) => [r.kind, r.name]), [
    ['init container', 'setup'],
    ['container', 'app'],
    ['container', '#1'],
    ['ephemeral container', 'debug'],
  ]);
  const [location] = podSpecsOf(cronJob(spec));
  t.equal(describeContainer(refs[1]!, location!), 'container "app" in pod template of CronJob "nightly"');
  t.same(containersOf({ containers: 'nope' }), []);
});
