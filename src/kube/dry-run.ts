/** A write's parameter that makes it a dry run: answered as the real one (rights, admission, validation), nothing stored. */
export const dryRunOption = (dryRun: boolean | undefined): { dryRun?: string } => (dryRun ? { dryRun: 'All' } : {});
