/** Warnings and audit annotations as kube-apiserver collects them (contract 2.5). */
import { isQualifiedName } from '../fake-apiserver/names.js';

const WARNING_BUDGET_RUNES = 4096;
const TRUNCATED_RUNES = 256;

export class WarningCollector {
  private readonly texts: string[] = [];

  add(warnings: readonly string[]): void {
    for (const text of warnings) if (!this.texts.includes(text)) this.texts.push(text);
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
