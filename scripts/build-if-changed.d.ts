/** Types of scripts/build-if-changed.js, for its test. */
export declare const INPUTS: readonly string[];
export declare const OUTPUTS: readonly string[];
export declare function buildReason(root: string): string | null;
export declare function writeStamp(root: string, hash?: string): void;
