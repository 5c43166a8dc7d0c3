/**
 * The CustomResourceDefinitions of cert-manager.io/v1 that the cert-manager overlay uses (as
 * cert-manager's install would add them): names, scope, printer columns and the status
 * subresource as cert-manager ships them, with schemas that keep any field.
 */
import type { KubeObject } from '../../fake-apiserver/index.js';

interface CrdSpec {
  plural: string;
  singular: string;
  kind: string;
  shortNames: string[];
  scope: 'Namespaced' | 'Cluster';
  columns: Record<string, unknown>[];
}

const ready = { jsonPath: '.status.conditions[?(@.type=="Ready")].status', name: 'Ready', type: 'string' };
const status = { jsonPath: '.status.conditions[?(@.type=="Ready")].message', name: 'Status', priority: 1, type: 'string' };
const age = { jsonPath: '.metadata.creationTimestamp', name: 'Age', type: 'date', description: 'CreationTimestamp is a timestamp representing the server time when this object was created.' };

const SPECS: CrdSpec[] = [
  {
    plural: 'certificates',
    singular: 'certificate',
    kind: 'Certificate',
    shortNames: ['cert', 'certs'],
    scope: 'Namespaced',
    columns: [ready, { jsonPath: '.spec.secretName', name: 'Secret', type: 'string' }, { jsonPath: '.spec.issuerRef.name', name: 'Issuer', priority: 1, type: 'string' }, status, age],
  },
  { plural: 'issuers', singular: 'issuer', kind: 'Issuer', shortNames: [], scope: 'Namespaced', columns: [ready, status, age] },
  { plural: 'clusterissuers', singular: 'clusterissuer', kind: 'ClusterIssuer', shortNames: [], scope: 'Cluster', columns: [ready, status, age] },
  {
    plural: 'certificaterequests',
    singular: 'certificaterequest',
    kind: 'CertificateRequest',
    shortNames: ['cr', 'crs'],
    scope: 'Namespaced',
    columns: [{ jsonPath: '.status.conditions[?(@.type=="Approved")].status', name: 'Approved', type: 'string' }, ready, { jsonPath: '.spec.issuerRef.name', name: 'Issuer', type: 'string' }, age],
  },
];

export function certManagerCrds(): KubeObject[] {
  return SPECS.map((spec) => ({
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${spec.plural}.cert-manager.io`, labels: { 'app.kubernetes.io/name': 'cert-manager', 'app.kubernetes.io/instance': 'cert-manager' } },
    spec: {
      group: 'cert-manager.io',
      names: { plural: spec.plural, singular: spec.singular, kind: spec.kind, listKind: `${spec.kind}List`, shortNames: spec.shortNames, categories: ['cert-manager'] },
      scope: spec.scope,
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          additionalPrinterColumns: spec.columns,
          subresources: { status: {} },
          schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
        },
      ],
    },
  }));
}
