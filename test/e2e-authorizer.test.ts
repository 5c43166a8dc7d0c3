// The compiled server answers a rule's `authorizer` checks with SubjectAccessReviews to the API
// double, which answers them from the Roles and bindings it stores (as kube-apiserver's RBAC
// authorizer does), under the shipped RBAC plus the authorizer component; without that grant the
// start fails, naming it. Reviews come through the double's admission caller as kube-apiserver
// sends them, with the requesting user.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import type { KubeObject } from '../local-cluster/fake-apiserver/index.js';
import { EXIT_MS } from './support/deadline.js';
import { ClusterHarness, NAME, NAMESPACE } from './support/kube/cluster-harness.js';
import { shippedRbac } from './support/manifests/shipped-rbac.js';
import { tempDir } from './support/tools/tool-runner.js';

const POLICY = `apiVersion: kube-admission-server/v1
kind: Policy
webhooks:
  - name: deployment-deleters
    kind: cel
    failurePolicy: Fail
    rules: [{ operations: [CREATE], apiGroups: [""], apiVersions: [v1], resources: [configmaps] }]
    validations:
      - expression: "authorizer.group('apps').resource('deployments').namespace(object.metadata.namespace).check('delete').allowed()"
        messageExpression: "request.userInfo.username + ' may not delete Deployments in ' + object.metadata.namespace"
        reason: Forbidden
`;
// Grouped (the default): the group's webhook answers, naming the entry that denied.
const WEBHOOK = `validating-fail-t5.${NAME}.${NAMESPACE}.svc`;
const rbac = 'rbac.authorization.k8s.io';

function seedTeamRbac(cluster: ClusterHarness): void {
  const { store } = cluster.api;
  store.put('roles', { metadata: { name: 'deployment-admin', namespace: 'team-a' }, rules: [{ apiGroups: ['apps'], resources: ['deployments'], verbs: ['delete'] }] } as KubeObject);
  store.put('rolebindings', {
    metadata: { name: 'alice', namespace: 'team-a' },
    roleRef: { apiGroup: rbac, kind: 'Role', name: 'deployment-admin' },
    subjects: [{ apiGroup: rbac, kind: 'User', name: 'alice' }],
  } as KubeObject);
  store.put('clusterroles', { metadata: { name: 'release-manager' }, rules: [{ apiGroups: ['apps'], resources: ['deployments'], verbs: ['delete', 'get'] }] } as KubeObject);
  store.put('clusterrolebindings', {
    metadata: { name: 'release-managers' },
    roleRef: { apiGroup: rbac, kind: 'ClusterRole', name: 'release-manager' },
    subjects: [{ apiGroup: rbac, kind: 'Group', name: 'release-managers' }],
  } as KubeObject);
}

const configMap = (namespace: string): KubeObject => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'settings', namespace }, data: { a: 'b' } });
const user = (username: string, ...groups: string[]) => ({ username, uid: `${username}-uid`, groups: [...groups, 'system:authenticated'] });

t.test('authorizer checks are SubjectAccessReviews to kube-apiserver, answered by its RBAC, cached, and a failed one is the failurePolicy\'s', async (t) => {
  const dir = await tempDir(t, 'kas-e2e-authorizer-');
  await writeFile(join(dir, 'policy.yaml'), POLICY);
  const cluster = await ClusterHarness.start(t);
  cluster.seedDeployment(['kas-a']);
  cluster.api.setRbac(await shippedRbac(NAMESPACE, ['authorizer']));
  seedTeamRbac(cluster);
  const replica = await cluster.startReplica(t, 'kas-a', ['--policy-file', join(dir, 'policy.yaml')]);
  t.match(replica.child.logs.find((l) => String(l.msg).includes('ask the authorizer')), { webhooks: ['deployment-deleters'] });

  const caller = cluster.caller(t, () => replica.port);
  const create = (namespace: string, userInfo: ReturnType<typeof user>) =>
    caller.admit({ operation: 'CREATE', object: configMap(namespace), kind: { group: '', version: 'v1', kind: 'ConfigMap' }, resource: { group: '', version: 'v1', resource: 'configmaps' }, userInfo });
  const reviews = () => cluster.api.requests.filter((r) => r.resource === 'subjectaccessreviews');

  t.match(await create('team-a', user('alice')), { allowed: true }, 'alice is bound to a Role that may delete Deployments in team-a');
  t.match(await create('default', user('alice')), { allowed: false, status: { code: 403, reason: 'Forbidden', message: `admission webhook "${WEBHOOK}" denied the request: deployment-deleters: alice may not delete Deployments in default` } });
  t.match(await create('default', user('carol', 'release-managers')), { allowed: true }, 'carol, through her group\'s ClusterRoleBinding');
  t.match(await create('team-a', user('bob')), { allowed: false, status: { message: /bob may not delete Deployments in team-a/ } });

  const asked = reviews().length;
  t.match(await create('team-a', user('alice')), { allowed: true });
  t.equal(reviews().length, asked, 'the same question again within the TTL: answered from the cache, no SubjectAccessReview');

  cluster.api.faults.add({ resource: 'subjectaccessreviews', verb: 'create' }, { status: 500 }, { times: 1 });
  t.match(await create('team-a', user('dave')), {
    allowed: false,
    status: { code: 422, reason: 'Invalid', message: /denied the request: deployment-deleters: expression 'authorizer\.group.*' resulted in error: SubjectAccessReview failed: 500 / },
  }, 'the review could not be asked: an error of the validation, failurePolicy Fail denies it with its text');
  t.match(await create('team-a', user('dave')), { allowed: false, status: { message: /dave may not delete Deployments in team-a/ } }, 'asked again next time (a failure is not cached)');

  t.ok(reviews().every((r) => r.status === 201 || r.fault !== undefined), 'every review created but the one the fault hit (none refused to the server)');
  t.same(cluster.api.requests.filter((r) => r.status === 403).map((r) => `${r.verb} ${r.resource}`), [], 'nothing beyond the shipped RBAC and the component');
  t.equal((await replica.child.stop()).code, 0);
});

t.test('without the grant (the base RBAC, no component) the start fails, naming it; nothing is registered', async (t) => {
  const dir = await tempDir(t, 'kas-e2e-authorizer-');
  await writeFile(join(dir, 'policy.yaml'), POLICY);
  const cluster = await ClusterHarness.start(t);
  cluster.seedDeployment(['kas-a']);
  cluster.api.setRbac(await shippedRbac(NAMESPACE));
  const replica = cluster.spawnReplica(t, 'kas-a', ['--policy-file', join(dir, 'policy.yaml')]);
  const exit = await replica.child.exit(EXIT_MS * 6);
  t.equal(exit.code, 1);
  t.match(replica.child.logs.find((l) => l.msg === 'startup failed; shutting down'), {
    error: /webhook deployment-deleters asks the authorizer: the server's ServiceAccount needs create on subjectaccessreviews\.authorization\.k8s\.io .*manifests\/components\/authorizer/,
  });
  t.notOk(cluster.configuration('validating'), 'nothing registered');
});
