/**
 * The mixed admission load: Pod CREATEs that the bundled example policy must allow unchanged,
 * must mutate (default labels, annotation and requests), or must deny (a privileged container, the
 * host network), each with the check that says whether the outcome was right.
 */
import type { AdmitRequest, AdmitResult } from '../../../local-cluster/admission-caller/index.js';
import type { KubeObject } from '../../../local-cluster/fake-apiserver/index.js';
import { POD_KIND, POD_RESOURCE } from '../kube/cluster-harness.js';

export type ObjectClass = 'allow' | 'mutate' | 'deny';

/** Why an outcome was wrong; the report counts failures by these. */
export type FailureReason =
  | 'allowed-object-refused'
  | 'denied-object-admitted'
  | 'denied-by-the-wrong-webhook'
  | 'mutation-missing'
  | 'unexpected-mutation'
  | 'webhook-call-failed-open'
  | 'caller-error';

export interface Sample {
  objectClass: ObjectClass;
  request: AdmitRequest;
  /** undefined when the outcome is what the policy says. */
  check(result: AdmitResult): FailureReason | undefined;
}

const DEFAULTED_LABEL = 'kube-admission-server/defaulted';
const POLICY_ANNOTATION = 'kube-admission-server/policy';
const DEFAULT_REQUESTS = { cpu: '50m', memory: '64Mi' };
const OWN_REQUESTS = { cpu: '10m', memory: '16Mi' };

interface PodShape {
  metadata: { labels?: Record<string, string>; annotations?: Record<string, string> };
  spec: { containers: { resources?: { requests?: Record<string, string> } }[] };
}

function pod(index: number, labels: Record<string, string>, annotations: Record<string, string>, container: Record<string, unknown>, spec: Record<string, unknown> = {}): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: `load-${index}`, namespace: 'team-a', labels, annotations },
    spec: { ...spec, containers: [{ name: 'app', image: 'registry.k8s.io/pause:3.9', ...container }] },
  };
}

const createRequest = (object: KubeObject): AdmitRequest => ({ operation: 'CREATE', object, kind: POD_KIND, resource: POD_RESOURCE });

/** Set by a failurePolicy Ignore webhook whose call failed: allowed, but the webhook was skipped. */
const failedOpen = (result: AdmitResult): boolean => Object.keys(result.auditAnnotations).some((key) => key.startsWith('failed-open.'));

const shapeOf = (result: AdmitResult & { allowed: true }): PodShape => result.object as unknown as PodShape;

/** Fully specified already: nothing to add, so the admitted object carries exactly what was sent. */
function allowSample(index: number): Sample {
  const labels = { app: 'web', [DEFAULTED_LABEL]: 'true' };
  const annotations = { [POLICY_ANNOTATION]: 'example' };
  return {
    objectClass: 'allow',
    request: createRequest(pod(index, labels, annotations, { resources: { requests: OWN_REQUESTS } })),
    check(result) {
      if (!result.allowed) return 'allowed-object-refused';
      if (failedOpen(result)) return 'webhook-call-failed-open';
      const shape = shapeOf(result);
      const same = JSON.stringify(shape.metadata.labels) === JSON.stringify(labels) && JSON.stringify(shape.spec.containers[0]?.resources?.requests) === JSON.stringify(OWN_REQUESTS);
      return same ? undefined : 'unexpected-mutation';
    },
  };
}

/** Bare: gets the default label, annotation and requests, and keeps its own label. */
function mutateSample(index: number): Sample {
  return {
    objectClass: 'mutate',
    request: createRequest(pod(index, { app: 'api' }, {}, {})),
    check(result) {
      if (!result.allowed) return 'allowed-object-refused';
      if (failedOpen(result)) return 'webhook-call-failed-open';
      const { metadata, spec } = shapeOf(result);
      const mutated =
        metadata.labels?.['app'] === 'api' &&
        metadata.labels[DEFAULTED_LABEL] === 'true' &&
        metadata.annotations?.[POLICY_ANNOTATION] === 'example' &&
        spec.containers.every((c) => JSON.stringify(c.resources?.requests) === JSON.stringify(DEFAULT_REQUESTS));
      return mutated ? undefined : 'mutation-missing';
    },
  };
}

/** Refused by the enforcing rule named in the message, not by a failed call. */
function denySample(index: number, hostNetwork: boolean): Sample {
  const object = hostNetwork
    ? pod(index, { app: 'net' }, {}, {}, { hostNetwork: true })
    : pod(index, { app: 'root' }, {}, { securityContext: { privileged: true } });
  const webhook = hostNetwork ? 'deny-host-namespaces' : 'deny-privileged';
  return {
    objectClass: 'deny',
    request: createRequest(object),
    check(result) {
      if (result.allowed) return 'denied-object-admitted';
      // Grouped (the bundled policy's default): the group's webhook denies, naming the entry.
      return /^admission webhook "validating-fail-t5\.[^"]+" denied the request: ([\w-]+): /.exec(result.status.message ?? '')?.[1] === webhook ? undefined : 'denied-by-the-wrong-webhook';
    },
  };
}

/** The index-th request of the load: allow, mutate and deny in turn. */
export function sampleFor(index: number): Sample {
  switch (index % 3) {
    case 0:
      return allowSample(index);
    case 1:
      return mutateSample(index);
    default:
      return denySample(index, index % 2 === 0);
  }
}

/** A refusal or a failed-open call caused by the transport (the endpoint went away), not by a webhook's answer. */
export function isTransportFailure(result: AdmitResult): boolean {
  if (failedOpen(result)) return true;
  return !result.allowed && /failed calling webhook "[^"]+": failed to call webhook: /.test(result.status.message ?? '');
}
