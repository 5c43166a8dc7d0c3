// The cert-manager overlay (files mode: the serving certificate from cert-manager, here its
// stand-in) on the local cluster, driven with kubectl as the README's "Try it" does.
import t from 'tap';
import { installScenario } from './local-cluster-scenario.js';

await installScenario(t, 'the cert-manager overlay on the local cluster', { kustomization: 'manifests/overlays/cert-manager', caSecret: 'kube-admission-server-serving-cert', createdObjects: 14 });
