// A start that fails writes nothing and deletes nothing, in a pod and out of a cluster, whatever
// made it fail; a SIGTERM that ends a start before its first write neither. Each way of failing
// runs the compiled server against the API double with another install's ValidatingWebhookConfiguration
// of the same name in place; the double alone judges: no request that changes a stored object
// reached it, its store's revision did not move, and the other install's object is as it was.
import { mkdir, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import type { RbacPolicy, RoleLike } from '../local-cluster/fake-apiserver/index.js';
import { EVENT_MS } from './support/deadline.js';
import { ClusterHarness, NAME, NAMESPACE } from './support/kube/cluster-harness.js';
import { seedOtherInstallsConfiguration, writeRequests } from './support/kube/write-audit.js';
import { shippedRbac } from './support/manifests/shipped-rbac.js';
import type { ChildServer } from './support/server/child-server.js';
import { maxReplicasPolicy, policyText } from './support/policy/policy-text.js';

interface Start {
  args: string[];
  /** What happens while the process starts (a signal), once it runs. */
  during?: (child: ChildServer, cluster: ClusterHarness) => Promise<void>;
}

interface WayToFail {
  name: string;
  /** kube-apiserver's version, when the way needs one. */
  version?: string;
  exitCode: number;
  /** The log line that names why the start ended. */
  cause: { msg: string; [field: string]: unknown };
  prepare(t: Test, cluster: ClusterHarness): Promise<Start>;
}

async function file(cluster: ClusterHarness, name: string, text: string): Promise<string> {
  const path = join(cluster.dir, name);
  await writeFile(path, text);
  return path;
}

/** The shipped RBAC without `verbs` on the webhook configurations (none left: no rule on them at all). */
async function rbacWithout(verbs: readonly string[]): Promise<RbacPolicy> {
  const shipped = await shippedRbac(NAMESPACE);
  const narrowed = (role: RoleLike): RoleLike => ({
    ...role,
    rules: (role.rules ?? [])
      .map((rule) => (rule.resources?.some((r) => r.endsWith('webhookconfigurations')) ? { ...rule, verbs: rule.verbs.filter((v) => !verbs.includes(v)) } : rule))
      .filter((rule) => rule.verbs.length > 0),
  });
  return { ...shipped, clusterRoles: (shipped.clusterRoles ?? []).map(narrowed) };
}

async function takenPort(t: Test): Promise<number> {
  const holder: Server = createServer();
  await new Promise<void>((resolve, reject) => holder.once('error', reject).listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => holder.close(() => resolve())));
  return (holder.address() as { port: number }).port;
}

const FAILED = 'startup failed; shutting down';

const WAYS: readonly WayToFail[] = [
  {
    name: 'an invalid policy file',
    exitCode: 2,
    cause: { msg: FAILED, problems: [/no-such-rule/] },
    prepare: async (_t, cluster) => ({ args: ['--policy-file', await file(cluster, 'policy.yaml', policyText('  - name: broken\n    kind: no-such-rule\n'))] }),
  },
  {
    name: 'a kube-apiserver the policy cannot run on (engine: native on 1.29)',
    version: 'v1.29.14',
    exitCode: 2,
    cause: { msg: FAILED, problems: [/entry max-replicas: engine: native cannot run on this cluster/] },
    prepare: async (_t, cluster) => ({ args: ['--policy-file', await file(cluster, 'policy.yaml', maxReplicasPolicy('native'))] }),
  },
  {
    name: 'no right to read the webhook configurations',
    exitCode: 1,
    cause: { msg: FAILED, error: /403 Forbidden/ },
    prepare: async (_t, cluster) => {
      cluster.api.setRbac(await rbacWithout(['get', 'list', 'watch', 'create', 'update', 'patch', 'delete']));
      return { args: [] };
    },
  },
  {
    name: 'no right to create or update them',
    exitCode: 1,
    cause: { msg: FAILED, error: /403 Forbidden: .*cannot (create|update) resource "(mutating|validating)webhookconfigurations"/ },
    prepare: async (_t, cluster) => {
      cluster.api.setRbac(await rbacWithout(['create', 'update', 'patch']));
      return { args: [] };
    },
  },
  {
    name: 'the configuration name held by another install',
    exitCode: 1,
    cause: {
      msg: FAILED,
      error: /the validating webhook configuration kube-admission-server is not this install's \(its webhook deny-privileged\.kube-admission-server\.other-install\.svc calls service other-install\/kube-admission-server\); it is left as it is: give this install a name of its own \(--config-name\)/,
    },
    prepare: async () => ({ args: [] }),
  },
  {
    name: 'the webhook port taken',
    exitCode: 1,
    cause: { msg: FAILED, error: /EADDRINUSE/ },
    prepare: async (t) => ({ args: ['--host', '127.0.0.1', '--port', String(await takenPort(t))] }),
  },
  {
    name: 'files mode without a certificate',
    exitCode: 1,
    cause: { msg: FAILED, error: /tls\.crt/ },
    prepare: async (_t, cluster) => {
      const empty = join(cluster.dir, 'empty-cert-dir');
      await mkdir(empty);
      return { args: ['--tls-mode', 'files', '--cert-dir', empty] };
    },
  },
  {
    name: 'SIGTERM while the start waits on the API',
    exitCode: 0,
    cause: { msg: 'shutdown requested during startup' },
    prepare: async (_t, cluster) => {
      // The owner ClusterRole's read hangs: the start is held on the API there, then signalled.
      cluster.api.faults.add({ resource: 'clusterroles', verb: 'get' }, { hang: true });
      return {
        args: [],
        during: async (child) => {
          await cluster.api.waitForRequest((r) => r.resource === 'clusterroles' && r.verb === 'get', { phase: 'started', timeoutMs: EVENT_MS });
          child.process.kill('SIGTERM');
        },
      };
    },
  },
];

const PLACES = [
  { where: 'in a pod', env: {} },
  { where: 'out of a cluster', env: { POD_NAME: '' } },
] as const;

for (const way of WAYS) {
  for (const { where, env } of PLACES) {
    t.test(`${way.name}, ${where}: exit ${way.exitCode}, nothing written, nothing deleted, the other install's configuration untouched`, async (t) => {
      const cluster = await ClusterHarness.start(t, way.version ? { version: way.version } : {});
      cluster.seedDeployment(['kas-a']);
      const other = seedOtherInstallsConfiguration(cluster.api.store);
      const start = await way.prepare(t, cluster);
      const revision = cluster.api.store.currentRevision;
      const spawnedAt = performance.now();
      const { child } = cluster.spawnReplica(t, 'kas-a', start.args, env);
      await start.during?.(child, cluster);
      const exit = await child.exit();

      t.equal(exit.code, way.exitCode, 'exit code');
      t.match(child.logs.find((l) => l.msg === way.cause.msg), way.cause, 'the log names why');
      t.same(writeRequests(cluster, spawnedAt), [], 'no request to change a stored object reached the API');
      t.equal(cluster.api.store.currentRevision, revision, 'the store did not change');
      t.same(cluster.api.store.get('validatingwebhookconfigurations', undefined, NAME), other, "the other install's configuration is as it was");
      t.notOk(
        child.logs.some((l) => l.msg === 'deleting the webhook configurations'),
        'no teardown',
      );
    });
  }
}
