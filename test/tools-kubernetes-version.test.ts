// --kubernetes-version: render, evaluate and test compile matchConditions as that kube-apiserver
// compiles a configuration written to it (its minor minus one: a 1.30 kube-apiserver has no ip()
// for a new expression, 1.31 has). Without the flag, the current release.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { COMMANDS } from '../src/commands/index.js';
import { loadConfig } from '../src/config/load-config.js';
import { parsePolicy } from '../src/policy/policy-file.js';
import { ChildServer } from './support/server/child-server.js';
import { runToolInProcess, tempDir } from './support/tools/tool-runner.js';

const POLICY = `apiVersion: kube-admission-server/v1
kind: Policy
webhooks:
  - name: internal-only
    kind: requireLabels
    params: { labels: [{ key: team }] }
    matchConditions:
      - name: from-pod-network
        expression: "ip('10.0.0.1').family() == 4 && request.userInfo.username != ''"
`;
const POD = `apiVersion: v1
kind: Pod
metadata: { name: web, namespace: team-a }
spec: { containers: [{ name: web, image: registry.k8s.io/pause:3.10 }] }
`;
const TEST_FILE = `apiVersion: kube-admission-server/v1
kind: PolicyTest
name: version
policy: policy.yaml
resources: [pod.yaml]
results:
  - { resource: Pod/team-a/web, webhook: internal-only, decision: denied }
`;
const REFUSED = /policy\.yaml:9:21: webhooks\[0\]\.matchConditions\[0\]\.expression: matchCondition "from-pod-network" of webhook "internal-only": CEL expression does not compile for kube-apiserver 1\.30, which compiles a new matchCondition with the Kubernetes 1\.29 CEL library: .*ip/;

async function files(t: Test): Promise<string> {
  const dir = await tempDir(t);
  await writeFile(join(dir, 'policy.yaml'), POLICY);
  await writeFile(join(dir, 'pod.yaml'), POD);
  await writeFile(join(dir, 'version-test.yaml'), TEST_FILE);
  return dir;
}

t.test('the policy floor: refused for 1.30 with the entry, the condition and both versions; stored by 1.31 and by default', async (t) => {
  const refused = parsePolicy(POLICY, 'policy.yaml', { kubernetesVersion: { major: 1, minor: 30 } });
  t.notOk(refused.ok);
  if (!refused.ok) t.match(refused.errors, [REFUSED]);
  t.ok(parsePolicy(POLICY, 'policy.yaml', { kubernetesVersion: { major: 1, minor: 31 } }).ok, '1.31 compiles new expressions with 1.30, which has ip()');
  t.ok(parsePolicy(POLICY, 'policy.yaml').ok, 'the current release by default');
  const typo = parsePolicy(POLICY.replace("request.userInfo.username != ''", "request.usrInfo.username != ''"), 'policy.yaml', { kubernetesVersion: { major: 1, minor: 31 } });
  t.notOk(typo.ok);
  if (!typo.ok) t.match(typo.errors, [/policy\.yaml:9:21: webhooks\[0\]\.matchConditions\[0\]\.expression: matchCondition "from-pod-network" of webhook "internal-only": CEL expression does not compile: No such key: usrInfo/], 'what no version compiles names no version');
});

t.test('evaluate and test: --kubernetes-version 1.30 is bad input (exit 2, file:line:col); 1.31 evaluates', async (t) => {
  const dir = await files(t);
  const policy = join(dir, 'policy.yaml');
  const old = await runToolInProcess(['evaluate', '-f', join(dir, 'pod.yaml'), '--policy-file', policy, '--kubernetes-version', '1.30']);
  t.equal(old.code, 2);
  t.match(old.stderr, REFUSED);
  const current = await runToolInProcess(['evaluate', '-f', join(dir, 'pod.yaml'), '--policy-file', policy, '--kubernetes-version', 'v1.31.4']);
  t.equal(current.code, 1, current.stderr);
  t.match(current.stdout, /validating internal-only: denied/);
  const test = await runToolInProcess(['test', dir, '--kubernetes-version', '1.30']);
  t.equal(test.code, 2);
  t.match(test.stdout, REFUSED);
  t.equal((await runToolInProcess(['test', dir, '--kubernetes-version', '1.31'])).code, 0);
});

t.test('render --kubernetes-version 1.30 refuses the policy (exit 2) and prints no configuration', async (t) => {
  const dir = await files(t);
  const render = new ChildServer(['render', '--cert-dir', join(dir, 'certs'), '--policy-file', join(dir, 'policy.yaml'), '--kubernetes-version', '1.30']);
  const exit = await render.exit();
  t.equal(exit.code, 2, 'invalid configuration');
  t.match(render.stderr, REFUSED);
  t.equal(render.stdout, '');
  const rendered = new ChildServer(['render', '--cert-dir', join(dir, 'certs'), '--policy-file', join(dir, 'policy.yaml'), '--kubernetes-version', '1.31']);
  t.equal((await rendered.exit()).code, 0, rendered.stderr);
  t.match(rendered.stdout, /from-pod-network/);
});

t.test('the flag: a version is required, and a server with a cluster reads it from the cluster instead', async (t) => {
  const probe = { env: {}, readFile: () => undefined, exists: () => false, hostname: () => 'test' };
  t.match(loadConfig(['evaluate', '-f', 'x', '--kubernetes-version', '2.0'], probe, COMMANDS), { kind: 'invalid', problems: [/--kubernetes-version: "2\.0" is not a Kubernetes version; use a Kubernetes version such as 1\.30 or v1\.30\.2/] });
  t.match(loadConfig(['render', '--kubernetes-version=1.30+'], probe, COMMANDS), { kind: 'run', command: 'render', config: { kubernetesVersion: { major: 1, minor: 30 } } });
  t.match(loadConfig(['--kubeconfig', '/k', '--kubernetes-version', '1.30'], probe, COMMANDS), { kind: 'invalid', problems: [/--kubernetes-version is for render, evaluate, test and a server without a cluster/] });
  t.match(loadConfig(['--kubernetes-version', '1.30'], probe, COMMANDS), { kind: 'run', command: 'serve', config: { kubernetesVersion: { major: 1, minor: 30 } } }, 'a server without a cluster takes it');
  t.match(loadConfig(['evaluate', '-f', 'x'], { ...probe, env: { TARGET_KUBERNETES_VERSION: 'v1.29.0' } }, COMMANDS), { kind: 'run', config: { kubernetesVersion: { major: 1, minor: 29 } } }, 'from the environment');
});
