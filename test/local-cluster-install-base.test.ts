// The install of manifests/base on a local cluster of its own, driven with kubectl exactly as the
// walk-through in docs/getting-started.md does, the manifests as shipped (generate mode: the CA in a Secret the replicas
// share). test/local-cluster-install-cert-manager.test.ts does the same for the cert-manager
// overlay, on another cluster, so the runner can run the two side by side.
import t from 'tap';

// Before anything heavy loads: the runner reads the comment and extends its deadline for this file.
t.setTimeout(480_000);
t.comment('timeout=480000');
const { installTest } = await import('./support/cluster/local-cluster-scenario.js');
await installTest(t, { kustomization: 'manifests/base', caSecret: 'kube-admission-server-certs', createdObjects: 10 });
