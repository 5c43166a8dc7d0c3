/**
 * The values a request shape may take, checked the same way whether they come from evaluate's
 * flags or from a test file's `request` field.
 */

export const OPERATIONS = ['CREATE', 'UPDATE', 'DELETE', 'CONNECT'] as const;
export type RequestOperation = (typeof OPERATIONS)[number];

export function operationProblem(value: string): string | undefined {
  return (OPERATIONS as readonly string[]).includes(value) ? undefined : `"${value}" is not an operation; use one of ${OPERATIONS.join(', ')}`;
}

export function subresourceProblem(value: string): string | undefined {
  return /^[a-z]+$/.test(value) ? undefined : `"${value}" is not a subresource name (lowercase letters, e.g. status, exec)`;
}

/** kube-apiserver takes any non-empty user and group name; what would break a header or a log line is refused. */
export function principalProblem(value: string): string | undefined {
  // eslint-disable-next-line no-control-regex
  return value !== '' && !/[\u0000-\u001f\u007f]/.test(value) ? undefined : `"${value}" is not a user or group name (non-empty, no control characters)`;
}
