// The install of the cert-manager overlay on a local cluster of its own, driven with kubectl as
// the walk-through in docs/getting-started.md does (its install comment names the overlay), the manifests as shipped:
// files mode, the serving certificate from the cert-manager stand-in's Secret.
// test/local-cluster-install-base.test.ts does the same for manifests/base.
import t from 'tap';

// Before anything heavy loads: the runner reads the comment and extends its deadline for this file.
t.setTimeout(480_000);
t.comment('timeout=480000');
const { installTest } = await import('./support/cluster/local-cluster-scenario.js');
await installTest(t, { kustomization: 'manifests/overlays/cert-manager', caSecret: 'kube-admission-server-serving-cert', createdObjects: 14 });
