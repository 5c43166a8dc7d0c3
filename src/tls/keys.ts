/** Private keys come from node:crypto: native and asynchronous, so the event loop never stalls. */
import { generateKeyPair } from 'node:crypto';
import { promisify } from 'node:util';

const generateKeyPairAsync = promisify(generateKeyPair);

/** Generates a PEM (PKCS#8) private key; the public half is derived from it when needed. */
export type KeyGenerator = () => Promise<string>;

async function freshRsaKey(): Promise<string> {
  const { privateKey } = await generateKeyPairAsync('rsa', {
    modulusLength: 2048,
    publicKeyEncoding: { type: 'spki', format: 'pem' },
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  });
  return privateKey;
}

const warmed: Promise<string>[] = [];

/**
 * Starts generating `count` keys on the thread pool now, for generateRsaKey to hand out later:
 * main.ts calls it before loading the rest of the server, so a first start's CA and leaf keys
 * are ready when the modules are. Keys nobody takes are simply dropped with the process.
 */
export function prewarmRsaKeys(count: number): void {
  for (let i = 0; i < count; i++) {
    const key = freshRsaKey();
    key.catch(() => undefined); // a failed warm key is replaced by a fresh one when taken
    warmed.push(key);
  }
}

/** A fresh RSA-2048 key as unencrypted PKCS#8 PEM (a pre-warmed one when available). */
export const generateRsaKey: KeyGenerator = async () => {
  const key = warmed.shift();
  return key ? await key.catch(freshRsaKey) : await freshRsaKey();
};
