/**
 * The webhook's Service with one ready endpoint, as a running install's EndpointSlice shows it: a
 * leader that creates a configuration finds it at once (EndpointGate). The API double alone has no
 * endpoints controller; the admission caller of these tests resolves the Service to a replica's port
 * itself. Tests of the wait for an endpoint run on the local cluster, whose kubelet, endpoints
 * controller and kube-proxy model it.
 */
import type { ObjectStore } from '../../../local-cluster/fake-apiserver/index.js';

export function seedReadyService(store: ObjectStore, namespace: string, name: string): void {
  store.put('services', { metadata: { name, namespace }, spec: { clusterIP: '10.96.0.20', ports: [{ name: 'https', port: 443, targetPort: 8443, protocol: 'TCP' }], selector: { app: name } } });
  store.put('endpointslices', {
    metadata: { name: `${name}-ready`, namespace, labels: { 'kubernetes.io/service-name': name } },
    addressType: 'IPv4',
    endpoints: [{ addresses: ['10.244.0.20'], conditions: { ready: true } }],
    ports: [{ name: 'https', port: 8443, protocol: 'TCP' }],
  });
}
