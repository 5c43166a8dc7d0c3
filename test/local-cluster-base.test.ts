// The plain install (manifests/base, generate mode: the CA in a Secret the replicas share) on the
// local cluster, driven with kubectl as the README's "Try it" does.
import t from 'tap';
import { installScenario } from './local-cluster-scenario.js';

await installScenario(t, 'manifests/base on the local cluster', { kustomization: 'manifests/base', caSecret: 'kube-admission-server-certs', createdObjects: 10 });
