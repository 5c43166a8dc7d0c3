/**
 * Input that cannot be taken (a request kube-apiserver would never send, a malformed file): the
 * tools report its message and exit 2 rather than fail. Thrown below the tools' floor too.
 */
export class BadInputError extends Error {
  override readonly name: string = 'BadInputError';
}
