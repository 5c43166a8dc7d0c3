// Which endpoints the leader asks before registering a new entry: the ready ones of the Service's
// EndpointSlices, on the webhook port, as kube-proxy routes kube-apiserver's calls.
import t from 'tap';
import type { V1EndpointSlice } from '@kubernetes/client-node';
import { readyReplicas } from '../src/registration/replica-entries.js';

const slice = (ports: { name?: string; port: number }[], endpoints: { addresses: string[]; ready?: boolean }[]): V1EndpointSlice => ({
  addressType: 'IPv4',
  ports,
  endpoints: endpoints.map(({ addresses, ready }) => ({ addresses, conditions: ready === undefined ? {} : { ready } })),
});

t.test('ready endpoints on the named port; not ready and terminating ones left out', async (t) => {
  const slices = [
    slice([{ name: 'metrics', port: 9090 }, { name: 'https', port: 8443 }], [{ addresses: ['10.0.0.1'], ready: true }, { addresses: ['10.0.0.2'], ready: false }, { addresses: ['10.0.0.3'] }]),
    slice([{ port: 9443 }], [{ addresses: ['fd00::4'], ready: true }]),
    slice([{ name: 'metrics', port: 9090 }, { name: 'other', port: 1 }], [{ addresses: ['10.0.0.5'], ready: true }]),
  ];
  t.same(readyReplicas(slices, 'https'), [
    { address: '10.0.0.1', port: 8443 },
    // The API says an unset ready means ready.
    { address: '10.0.0.3', port: 8443 },
    // A slice with one unnamed port: that port.
    { address: 'fd00::4', port: 9443 },
  ]);
  t.same(readyReplicas([], 'https'), [], 'no slices, no replicas');
});
