// docs/getting-started.md's "What already runs, in reports", run as written: `npm run
// local-cluster`, the shipped report CRDs, the base install with manifests/components/reports
// (its RBAC enforced by the local cluster's authorizer), a privileged Deployment in a report
// with its ReplicaSet and Pod (warn), fixed and gone from the warnings, and the uninstall taking
// the reports with it.
import { readFileSync } from 'node:fs';
import t from 'tap';
import { describeResult } from './support/tools/kubectl.js';
import { startScenarioCluster } from './support/cluster/local-cluster-scenario.js';

const demo = ((): string[] => {
  const text = readFileSync(new URL('../docs/getting-started.md', import.meta.url), 'utf8');
  const start = text.indexOf('\n### What already runs, in reports\n');
  const block = /```sh\n([\s\S]*?)\n```/.exec(text.slice(start))?.[1] ?? '';
  return block.split('\n').filter((line) => line.trim() !== '' && !line.startsWith('#'));
})();

t.test("the reports walk-through's commands, as written", async (t) => {
  t.ok(demo.length >= 10, `${demo.length} commands`);
  const cluster = await startScenarioCluster(t);
  if (!cluster) return;
  const diagnostics = async (): Promise<void> => {
    for (const command of ["kubectl -n demo get report kube-admission-server -o jsonpath='{range .results[*]}{.resources[0].kind}/{.resources[0].name} {.policy} {.result}{\"\\n\"}{end}'", 'kubectl -n kube-admission-server get pods -o wide', 'kubectl -n demo get deployments,replicasets,pods -o wide']) {
      t.comment(describeResult(await cluster.sh(command, 30_000)));
    }
    t.comment(`local cluster output (last 6000 characters):\n${cluster.cluster.output.slice(-6000)}`);
  };
  for (const command of demo) {
    const result = await cluster.sh(command);
    if (!t.equal(result.code, 0, `${command}\n${result.code === 0 ? '' : describeResult(result)}`)) await diagnostics();
    if (command.includes("-o jsonpath='{range .results")) {
      const lines = result.stdout.trim().split('\n').sort();
      t.equal(lines.length, 3, result.stdout);
      t.match(lines[0], /^Deployment\/web: deny-privileged: .*privileged/);
      t.match(lines[1], /^Pod\/web-[a-z0-9]+-[a-z0-9]+: deny-privileged: /);
      t.match(lines[2], /^ReplicaSet\/web-[a-z0-9]+: deny-privileged: /);
    }
    if (command.startsWith('kubectl get reports -A')) t.match(result.stdout, /demo\s+kube-admission-server\s+\d+\s+0\s+3\s+0\s+0/, 'the counts: pass, fail 0, warn 3, error 0, skip 0');
    if (command.startsWith('kubectl delete -k examples/local-cluster/reports')) {
      const left = await cluster.sh('kubectl get reports -A -o name');
      t.equal(left.stdout.trim(), '', 'no report left');
    }
  }
});
