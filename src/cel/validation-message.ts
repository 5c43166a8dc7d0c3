/**
 * The text of a failing validation, chosen as kube-apiserver chooses it
 * (plugin/policy/validating/validator.go): the messageExpression's result, trimmed, unless it is
 * not a string, is empty, holds a line break or is longer than 5 KiB; then `message`, trimmed;
 * then `failed expression: <expression>`.
 */

/** kube-apiserver's MaxEvaluatedMessageExpressionSizeBytes. */
export const MAX_MESSAGE_EXPRESSION_BYTES = 5 * 1024;

/** The messageExpression's result if kube-apiserver would show it, else "". */
export function usableMessageExpressionResult(result: unknown): string {
  if (typeof result !== 'string') return '';
  const message = result.trim();
  if (Buffer.byteLength(message, 'utf8') > MAX_MESSAGE_EXPRESSION_BYTES) return '';
  if (message.includes('\n')) return '';
  return message;
}

export function fallbackMessage(message: string | undefined, expressionSource: string): string {
  const trimmed = message?.trim() ?? '';
  return trimmed !== '' ? trimmed : `failed expression: ${expressionSource.trim()}`;
}
