/** Warnings and audit annotations as kube-apiserver collects them (contract 2.5). */
import { isQualifiedName } from '../fake-apiserver/names.js';

const WARNING_BUDGET_RUNES = 4096;
const TRUNCATED_RUNES = 256;

/** A character Go's unicode.IsControl accepts (C0, DEL, C1). */
const isControl = (code: number): boolean => code <= 0x1f || (code >= 0x7f && code <= 0x9f);

/** Text NewWarningHeader refuses: a control character, or a UTF-16 half without its pair (invalid UTF-8 once encoded). */
function unsendable(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (isControl(code)) return true;
    const high = code >= 0xd800 && code <= 0xdbff;
    const low = code >= 0xdc00 && code <= 0xdfff;
    const next = text.charCodeAt(i + 1);
    if (low || (high && !(next >= 0xdc00 && next <= 0xdfff))) return true;
    if (high) i++;
  }
  return false;
}

export class WarningCollector {
  private readonly texts: string[] = [];

  /** kube-apiserver's recorder drops, without a word, a warning that is empty or that NewWarningHeader refuses (a control character, invalid UTF-8). */
  add(warnings: readonly string[]): void {
    for (const text of warnings) if (text !== '' && !unsendable(text) && !this.texts.includes(text)) this.texts.push(text);
  }

  /** Past the budget, every warning is cut to 256 runes. */
  result(): string[] {
    const runes = this.texts.reduce((sum, text) => sum + [...text].length, 0);
    if (runes <= WARNING_BUDGET_RUNES) return [...this.texts];
    return this.texts.map((text) => [...text].slice(0, TRUNCATED_RUNES).join(''));
  }
}

export class AuditAnnotations {
  readonly values: Record<string, string> = {};

  /** Adds `<webhook>/<key>` entries; invalid keys and conflicting values are dropped (only logged upstream). */
  addFromWebhook(webhookName: string, annotations: Record<string, string>): void {
    for (const [key, value] of Object.entries(annotations)) this.set(`${webhookName}/${key}`, value);
  }

  set(key: string, value: string): void {
    if (isQualifiedName(key).length > 0 || !key.includes('/')) return;
    const existing = this.values[key];
    if (existing !== undefined && existing !== value) return;
    this.values[key] = value;
  }
}
