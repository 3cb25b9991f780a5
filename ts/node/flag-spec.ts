/** One command-line flag of the node (the table is ./flags.ts). */
export interface FlagSpec {
  /** Long name without the dashes. */
  name: string;
  type: 'string' | 'boolean';
  /** Environment variable read when the flag is absent. */
  env?: string;
  /** The default in words (it may depend on the network). */
  default: string;
  help: string;
  /** Placeholder of the value in the help text. */
  value?: string;
}
