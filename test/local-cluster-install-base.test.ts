// The install of manifests/base on a local cluster of its own, driven with kubectl exactly as the
// README's "Try it" does, the manifests as shipped (generate mode: the CA in a Secret the replicas
// share). test/local-cluster-install-cert-manager.test.ts does the same for the cert-manager
// overlay, on another cluster, so the runner can run the two side by side.
import t from 'tap';

// Before anything heavy loads: the runner reads the comment and extends its deadline for this file.
const TIMEOUT_MS = 480_000;
t.setTimeout(TIMEOUT_MS);
t.comment(`timeout=${TIMEOUT_MS}`);
const { runInstallScenario, startScenarioCluster } = await import('./local-cluster-scenario.js');

await t.test('npm run local-cluster, then the Try-it commands for manifests/base', async (t) => {
  const cluster = await startScenarioCluster(t);
  if (!cluster) return;
  await runInstallScenario(t, cluster, { kustomization: 'manifests/base', caSecret: 'kube-admission-server-certs', createdObjects: 10 });
  t.comment(`install to uninstall in ${((performance.now() - cluster.startedAt) / 1000).toFixed(1)} s`);
});
