import { STATUS_CODES } from 'node:http';

export interface FieldError {
  field: string;
  message: string;
}

/**
 * A domain error with a stable, machine-readable `code`. Services throw these; one
 * filter renders them as problem+json (REST) or a JSON-RPC error (protocol).
 */
export class AppError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    readonly detail: string,
    readonly extra: { errors?: FieldError[]; headers?: Record<string, string> } = {},
  ) {
    super(detail);
  }

  get title(): string {
    return STATUS_CODES[this.status] ?? 'Error';
  }
}

export const badRequest = (code: string, detail: string, errors?: FieldError[]) => new AppError(400, code, detail, { errors });
export const unauthorized = (code: string, detail: string) => new AppError(401, code, detail);
export const forbidden = (code: string, detail: string) => new AppError(403, code, detail);
export const notFound = (code: string, detail: string) => new AppError(404, code, detail);
export const conflict = (code: string, detail: string) => new AppError(409, code, detail);
