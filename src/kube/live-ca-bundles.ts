import type { ConfigurationApi } from './configuration-api.js';

/**
 * The caBundle (decoded PEM) of every webhook in the live configurations named `name`: what
 * kube-apiserver trusts when it calls this server. A configuration that does not exist adds none.
 */
export async function readLiveCaBundles(apis: readonly ConfigurationApi[], name: string, signal: AbortSignal): Promise<string[]> {
  const configurations = await Promise.all(apis.map((api) => api.read(name, signal)));
  return configurations.flatMap((configuration) =>
    (configuration?.webhooks ?? []).map((webhook) => Buffer.from(webhook.clientConfig?.caBundle ?? '', 'base64').toString('utf8')),
  );
}
