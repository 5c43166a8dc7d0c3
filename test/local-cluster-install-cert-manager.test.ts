// The install of the cert-manager overlay on a local cluster of its own, driven with kubectl as
// the README's "Try it" does (its install comment names the overlay), the manifests as shipped:
// files mode, the serving certificate from the cert-manager stand-in's Secret.
// test/local-cluster-install-base.test.ts does the same for manifests/base.
import t from 'tap';

// Before anything heavy loads: the runner reads the comment and extends its deadline for this file.
const TIMEOUT_MS = 480_000;
t.setTimeout(TIMEOUT_MS);
t.comment(`timeout=${TIMEOUT_MS}`);
const { runInstallScenario, startScenarioCluster } = await import('./local-cluster-scenario.js');

await t.test('npm run local-cluster, then the Try-it commands for manifests/overlays/cert-manager', async (t) => {
  const cluster = await startScenarioCluster(t);
  if (!cluster) return;
  await runInstallScenario(t, cluster, { kustomization: 'manifests/overlays/cert-manager', caSecret: 'kube-admission-server-serving-cert', createdObjects: 14 });
  t.comment(`install to uninstall in ${((performance.now() - cluster.startedAt) / 1000).toFixed(1)} s`);
});
