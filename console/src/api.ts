import { createApiClient } from '../../client';
import { humanFieldMessage, PROBLEM_WORDS } from './problem-words';

/** Same origin, the HttpOnly session cookie: the browser sends it and the Origin header itself. */
export const api = createApiClient({ baseUrl: window.location.origin, credentials: 'same-origin' });

export interface FieldError {
  field: string;
  message: string;
}

/** An RFC 9457 problem as the service answers it. */
export interface Problem {
  status: number;
  title?: string;
  detail?: string;
  code?: string;
  errors?: FieldError[];
}

export class ApiError extends Error {
  constructor(readonly problem: Problem) {
    super(problem.detail ?? problem.title ?? `Request failed (${problem.status})`);
  }
  get status(): number {
    return this.problem.status;
  }
  /** The message for one form field, in a person's words: a field error of the problem, or its code's (PROBLEM_WORDS). */
  fieldError(field: string): string | undefined {
    const error = this.problem.errors?.find(
      (e) => e.field === field || e.field.startsWith(`${field}.`) || e.field.startsWith(`${field}[`),
    );
    if (error) {
      return humanFieldMessage(error.field, error.message);
    }
    // A problem that names its fields belongs to those only; else to its code's usual field.
    if (this.problem.errors?.length) {
      return undefined;
    }
    const known = this.problem.code ? PROBLEM_WORDS[this.problem.code] : undefined;
    return known?.field && (known.field === field || field.startsWith(`${known.field}.`)) ? known.words : undefined;
  }
  /** Whether the problem belongs to a field (shown next to it rather than in a notice). */
  get forField(): boolean {
    return !!(this.problem.code && PROBLEM_WORDS[this.problem.code]?.field);
  }
  /** What went wrong, in a person's words. */
  get words(): string {
    return (this.problem.code && PROBLEM_WORDS[this.problem.code]?.words) || this.message;
  }
}

/**
 * Unwraps an openapi-fetch result: the body on success (typed by the generated client;
 * naming `T` checks that the operation answers that shape), an ApiError carrying the
 * problem otherwise.
 */
export async function call<T>(request: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T> {
  let result: Awaited<typeof request>;
  try {
    result = await request;
  } catch {
    throw new ApiError({ status: 0, detail: 'The service could not be reached. Check your connection and try again.' });
  }
  const { data, error, response } = result;
  if (!response.ok) {
    const problem =
      typeof error === 'object' && error !== null
        ? (error as Problem)
        : { status: response.status, detail: String(error ?? response.statusText) };
    throw new ApiError({ ...problem, status: response.status });
  }
  return data as T;
}
