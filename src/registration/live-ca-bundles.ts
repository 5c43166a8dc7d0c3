import type { ConfigurationApi, WebhookConfiguration } from './configuration-api.js';

/**
 * The caBundle (decoded PEM) of every webhook in `configurations`: what kube-apiserver trusts
 * when it calls this server, one entry per webhook. A configuration that does not exist adds none.
 */
export function caBundlesOf(configurations: readonly (WebhookConfiguration | undefined)[]): string[] {
  return configurations.flatMap((configuration) =>
    (configuration?.webhooks ?? []).map((webhook) => Buffer.from(webhook.clientConfig?.caBundle ?? '', 'base64').toString('utf8')),
  );
}

/** caBundlesOf the live configurations named `name`, read now. */
export async function readLiveCaBundles(apis: readonly ConfigurationApi[], name: string, signal: AbortSignal): Promise<string[]> {
  return caBundlesOf(await Promise.all(apis.map((api) => api.read(name, signal))));
}
