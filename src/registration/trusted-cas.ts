import type { ConfigurationApi } from './configuration-api.js';
import { readLiveCaBundles } from './live-ca-bundles.js';
import type { TrustedCaReader } from '../tls/ca-confirmation.js';
import { parseUsableCertificates } from '../tls/pem.js';

/**
 * The CAs that kube-apiserver trusts for every webhook of the live configurations, read back from
 * the API: what the generate-mode source waits for before its leaf moves to a new CA. Any replica
 * can read them (the Role grants get on the two names), so followers wait for the same proof as
 * the leader that wrote them. No webhook at all trusts nothing.
 */
export function liveTrustedCas(apis: readonly ConfigurationApi[], configName: string): TrustedCaReader {
  return async (signal) => {
    const bundles = await readLiveCaBundles(apis, configName, signal);
    const perWebhook = bundles.map((pem) => new Set(parseUsableCertificates(pem).map((cert) => cert.fingerprint256)));
    const [first, ...rest] = perWebhook;
    return new Set([...(first ?? [])].filter((fingerprint) => rest.every((set) => set.has(fingerprint))));
  };
}
