// Teardown `auto` deletes when there is no pod at all and keeps when its pod cannot be read: the
// configuration tells the two apart from what kubelet and the manifests put into a pod.
import { COMMANDS } from '../src/commands/index.js';
import t from 'tap';
import { loadConfig, type EnvironmentProbe } from '../src/config/load-config.js';

const probe = (env: Record<string, string> = {}): EnvironmentProbe => ({ env, readFile: () => undefined, exists: () => false, hostname: () => 'laptop' });

function inPod(argv: string[], env: Record<string, string> = {}): boolean {
  const result = loadConfig(argv, probe(env), COMMANDS);
  if (result.kind !== 'run') throw new Error(`expected a runnable configuration, got ${JSON.stringify(result)}`);
  return result.config.inPod;
}

t.test('a developer machine with a kubeconfig is not a pod', async (t) => {
  t.equal(inPod(['--kubeconfig', '/tmp/kc']), false);
  t.equal(inPod([]), false, 'nor a local run without a cluster');
});

t.test('KUBERNETES_SERVICE_HOST (set by kubelet in every container) means a pod, kubeconfig or not', async (t) => {
  t.equal(inPod(['--kubeconfig', '/tmp/kc'], { KUBERNETES_SERVICE_HOST: '10.96.0.1' }), true);
});

t.test('a pod name given (POD_NAME from the Downward API, or --pod-name) means a pod', async (t) => {
  t.equal(inPod(['--kubeconfig', '/tmp/kc'], { POD_NAME: 'kas-7d4b9c-x2x7q' }), true);
  t.equal(inPod(['--kubeconfig', '/tmp/kc', '--pod-name', 'kas-7d4b9c-x2x7q']), true);
  t.equal(inPod(['--kubeconfig', '/tmp/kc'], { POD_NAME: '' }), false, 'an empty POD_NAME is no pod name');
});
