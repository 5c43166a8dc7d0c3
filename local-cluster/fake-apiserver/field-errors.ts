/** field.Error of apimachinery: the texts of 422 bodies (contract section 4.4). */

/** TypeInvalid: a value of the wrong JSON type (custom resources' schemas); printed as Invalid value. */
export type FieldErrorType = 'Required' | 'Invalid' | 'TypeInvalid' | 'Duplicate' | 'NotSupported' | 'Forbidden' | 'TooMany' | 'TooLong';

export interface FieldError {
  type: FieldErrorType;
  field: string;
  badValue?: unknown;
  detail?: string;
  /** NotSupported: the values that would have been accepted. */
  supported?: readonly string[];
  /** TooMany: the limit. */
  max?: number;
  /** badValue is already Go's %v text (a map, a struct): printed as it is. */
  rawBadValue?: boolean;
}

const TYPE_TEXT: Record<FieldErrorType, string> = {
  Required: 'Required value',
  Invalid: 'Invalid value',
  TypeInvalid: 'Invalid value',
  Duplicate: 'Duplicate value',
  NotSupported: 'Unsupported value',
  Forbidden: 'Forbidden',
  TooMany: 'Too many',
  TooLong: 'Too long',
};

const CAUSE_REASON: Record<FieldErrorType, string> = {
  Required: 'FieldValueRequired',
  Invalid: 'FieldValueInvalid',
  TypeInvalid: 'FieldValueTypeInvalid',
  Duplicate: 'FieldValueDuplicate',
  NotSupported: 'FieldValueNotSupported',
  Forbidden: 'FieldValueForbidden',
  TooMany: 'FieldValueTooMany',
  TooLong: 'FieldValueTooLong',
};

/** Strings quoted, numbers and bools bare, everything else as JSON (current apimachinery). */
export function formatBadValue(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return JSON.stringify(value);
}

export function formatFieldErrorBody(error: FieldError): string {
  let text = TYPE_TEXT[error.type];
  let detail = error.detail ?? '';
  if (error.type === 'NotSupported') {
    text += `: ${formatBadValue(error.badValue)}`;
    if (error.supported && error.supported.length > 0) {
      detail = `supported values: ${error.supported.map((v) => JSON.stringify(v)).join(', ')}`;
    }
  } else if (error.type === 'TooMany') {
    text += `: ${formatBadValue(error.badValue)}`;
    detail = `must have at most ${error.max ?? 0} ${error.max === 1 ? 'item' : 'items'}`;
  } else if (error.type === 'TooLong') {
    detail = `may not be more than ${error.max ?? 0} ${error.max === 1 ? 'byte' : 'bytes'}`;
  } else if (error.type === 'Invalid' || error.type === 'TypeInvalid' || error.type === 'Duplicate') {
    text += `: ${error.rawBadValue ? String(error.badValue) : formatBadValue(error.badValue)}`;
  }
  return detail === '' ? text : `${text}: ${detail}`;
}

export function formatFieldError(error: FieldError): string {
  return `${error.field}: ${formatFieldErrorBody(error)}`;
}

export function causeReason(error: FieldError): string {
  return CAUSE_REASON[error.type];
}

export const required = (field: string, detail = ''): FieldError => ({ type: 'Required', field, detail });
export const invalidValue = (field: string, badValue: unknown, detail: string): FieldError => ({
  type: 'Invalid',
  field,
  badValue,
  detail,
});
export const duplicate = (field: string, badValue: unknown): FieldError => ({ type: 'Duplicate', field, badValue });
export const notSupported = (field: string, badValue: unknown, supported: readonly string[]): FieldError => ({
  type: 'NotSupported',
  field,
  badValue,
  supported,
});
export const forbiddenField = (field: string, detail: string): FieldError => ({ type: 'Forbidden', field, detail });
export const tooMany = (field: string, actual: number, max: number): FieldError => ({
  type: 'TooMany',
  field,
  badValue: actual,
  max,
});
export const tooLongField = (field: string, max: number): FieldError => ({ type: 'TooLong', field, max });
