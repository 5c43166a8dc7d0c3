/** The defaults kube-apiserver fills into admissionregistration.k8s.io/v1 configurations (contract 4.3). */
import type { KubeObject } from './objects.js';

type Json = Record<string, unknown>;

const isRecord = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);

function defaultWebhook(hook: Json, mutating: boolean): void {
  hook.failurePolicy ??= 'Fail';
  hook.matchPolicy ??= 'Equivalent';
  hook.namespaceSelector ??= {};
  hook.objectSelector ??= {};
  hook.timeoutSeconds ??= 10;
  if (mutating) hook.reinvocationPolicy ??= 'Never';
  if (Array.isArray(hook.rules)) {
    for (const rule of hook.rules) if (isRecord(rule)) rule.scope ??= '*';
  }
  const clientConfig = hook.clientConfig;
  if (isRecord(clientConfig) && isRecord(clientConfig.service)) clientConfig.service.port ??= 443;
}

/** Mutates `object` in place, as the v1 defaulting functions do after decoding. */
export function applyWebhookDefaults(object: KubeObject, mutating: boolean): void {
  if (!Array.isArray(object.webhooks)) return;
  for (const hook of object.webhooks) if (isRecord(hook)) defaultWebhook(hook, mutating);
}
