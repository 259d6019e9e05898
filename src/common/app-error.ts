import { STATUS_CODES } from 'node:http';
import type { CodeWithStatus, ErrorCode, ErrorStatus } from './error-codes';

export interface FieldError {
  field: string;
  message: string;
}

export interface AppErrorExtra {
  errors?: FieldError[];
  headers?: Record<string, string>;
  /** Members the error's body carries beside `code` (problem+json, JSON-RPC `data`, ErrorInfo metadata): `resets_at`. */
  data?: Record<string, string>;
}

/** A status and one of the codes error-codes.ts allows with it. */
type StatusAndCode = { [S in ErrorStatus]: [status: S, code: CodeWithStatus<S>] }[ErrorStatus];

/**
 * A domain error with a stable, machine-readable `code` from the catalogue
 * (error-codes.ts). Services throw these; one filter renders them as problem+json
 * (REST) or a JSON-RPC error (protocol).
 */
export class AppError extends Error {
  readonly status: number;
  readonly code: ErrorCode;
  readonly detail: string;
  readonly extra: AppErrorExtra;

  constructor(...[status, code, detail, extra = {}]: [...StatusAndCode, detail: string, extra?: AppErrorExtra]) {
    super(detail);
    this.status = status;
    this.code = code;
    this.detail = detail;
    this.extra = extra;
  }

  /**
   * An error that did not start here (an HTTP exception, a body parser's error): its
   * status is the one it came with, which the catalogue may not list for `code`.
   */
  static withStatus(status: number, code: ErrorCode, detail: string): AppError {
    return Object.assign(new AppError(500, 'internal_error', detail), { status, code });
  }

  get title(): string {
    return STATUS_CODES[this.status] ?? 'Error';
  }
}

export const badRequest = (code: CodeWithStatus<400>, detail: string, errors?: FieldError[]) =>
  new AppError(400, code, detail, { errors });
export const unauthorized = (code: CodeWithStatus<401>, detail: string) => new AppError(401, code, detail);
export const forbidden = (code: CodeWithStatus<403>, detail: string) => new AppError(403, code, detail);
export const notFound = (code: CodeWithStatus<404>, detail: string) => new AppError(404, code, detail);
export const conflict = (code: CodeWithStatus<409>, detail: string) => new AppError(409, code, detail);
export const tooManyRequests = (code: CodeWithStatus<429>, detail: string, extra?: AppErrorExtra) =>
  new AppError(429, code, detail, extra);
