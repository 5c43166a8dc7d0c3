/** Private keys come from node:crypto: native and asynchronous, so the event loop never stalls. */
import { generateKeyPair } from 'node:crypto';
import { promisify } from 'node:util';

const generateKeyPairAsync = promisify(generateKeyPair);

/** Generates a PEM (PKCS#8) private key; the public half is derived from it when needed. */
export type KeyGenerator = () => Promise<string>;

/** A fresh RSA-2048 key as unencrypted PKCS#8 PEM. */
export const generateRsaKey: KeyGenerator = async () => {
  const { privateKey } = await generateKeyPairAsync('rsa', {
    modulusLength: 2048,
    publicKeyEncoding: { type: 'spki', format: 'pem' },
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  });
  return privateKey;
};
