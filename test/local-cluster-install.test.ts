// The install on the local cluster, driven with kubectl exactly as the README's "Try it" does,
// the manifests as shipped: manifests/base (generate mode: the CA in a Secret the replicas
// share), then, on the same cluster after its uninstall, the cert-manager overlay (files mode:
// the serving certificate from cert-manager's stand-in). One after the other on purpose: each
// runs two to three server processes, and a busy two-core machine starts them slowly.
import t from 'tap';

// Before anything heavy loads: the runner reads the comment and extends its deadline for this file.
const TIMEOUT_MS = 720_000;
t.setTimeout(TIMEOUT_MS);
t.comment(`timeout=${TIMEOUT_MS}`);
const { runInstallScenario, startScenarioCluster } = await import('./local-cluster-scenario.js');

await t.test('npm run local-cluster, then the Try-it commands', async (t) => {
  const cluster = await startScenarioCluster(t);
  if (!cluster) return;
  await t.test('manifests/base', (t) => runInstallScenario(t, cluster, { kustomization: 'manifests/base', caSecret: 'kube-admission-server-certs', createdObjects: 10 }));
  await t.test('manifests/overlays/cert-manager', (t) =>
    runInstallScenario(t, cluster, { kustomization: 'manifests/overlays/cert-manager', caSecret: 'kube-admission-server-serving-cert', createdObjects: 14 }),
  );
  t.comment(`both installs in ${((performance.now() - cluster.startedAt) / 1000).toFixed(1)} s`);
});
