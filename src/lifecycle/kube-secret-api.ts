import type { V1Secret } from '@kubernetes/client-node';
import { describeApiFailure, formatApiFailure, retryAfterMs } from '../kube/api-errors.js';
import type { KubeApi } from '../kube/client.js';
import { callApi } from '../kube/request-deadline.js';
import { SecretApiError, type SecretApi, type SecretRecord } from '../tls/secret-api.js';

function toRecord(secret: V1Secret): SecretRecord {
  const data = Object.fromEntries(Object.entries(secret.data ?? {}).map(([key, value]) => [key, Buffer.from(value, 'base64').toString('utf8')]));
  return {
    name: secret.metadata?.name ?? '',
    ...(secret.metadata?.resourceVersion ? { resourceVersion: secret.metadata.resourceVersion } : {}),
    type: secret.type ?? 'Opaque',
    labels: { ...secret.metadata?.labels },
    data,
    ...(secret.metadata?.ownerReferences ? { ownerReferences: secret.metadata.ownerReferences } : {}),
  };
}

function toSecret(record: SecretRecord, namespace: string): V1Secret {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: {
      name: record.name,
      namespace,
      labels: record.labels,
      ...(record.resourceVersion ? { resourceVersion: record.resourceVersion } : {}),
      ...(record.ownerReferences ? { ownerReferences: [...record.ownerReferences] } : {}),
    },
    type: record.type,
    data: Object.fromEntries(Object.entries(record.data).map(([key, value]) => [key, Buffer.from(value, 'utf8').toString('base64')])),
  };
}

/** Maps API failures to the reasons the certificate code reacts to (and the wait the API asked for). */
function secretApiError(error: unknown, name: string, namespace: string): SecretApiError {
  const failure = describeApiFailure(error);
  const reason = failure.reason === 'AlreadyExists' || failure.reason === 'Conflict' || failure.reason === 'NotFound' ? failure.reason : 'Other';
  // A refusal is an install mistake, fatal at start: say which right is missing and who grants it.
  const fix =
    failure.code === 403
      ? `; the ServiceAccount needs get, create and update on secrets in namespace ${namespace} (the shipped Role grants them; or use --tls-mode files)`
      : '';
  return new SecretApiError(`Secret ${namespace}/${name}: ${formatApiFailure(error)}${fix}`, reason, failure.code, retryAfterMs(error));
}

/** The certificate code's SecretApi on top of @kubernetes/client-node, in one namespace. */
export function kubeSecretApi(api: KubeApi, namespace: string): SecretApi {
  const call = async <T>(name: string, signal: AbortSignal, fn: Parameters<typeof callApi<T>>[1]): Promise<T> => {
    try {
      return await callApi(signal, fn);
    } catch (error) {
      throw secretApiError(error, name, namespace);
    }
  };
  return {
    read: async (name, signal) => {
      try {
        return toRecord(await call(name, signal, (o) => api.core.readNamespacedSecret({ name, namespace }, o)));
      } catch (error) {
        if (error instanceof SecretApiError && error.reason === 'NotFound') return undefined;
        throw error;
      }
    },
    create: async (record, signal) =>
      toRecord(await call(record.name, signal, (o) => api.core.createNamespacedSecret({ namespace, body: toSecret(record, namespace) }, o))),
    replace: async (record, signal) =>
      toRecord(
        await call(record.name, signal, (o) => api.core.replaceNamespacedSecret({ name: record.name, namespace, body: toSecret(record, namespace) }, o)),
      ),
  };
}
