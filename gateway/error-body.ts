// The error body of the API, the same for every error and every transport.
import type { ErrorDetail } from '../bus/errors.ts';

export interface ErrorBody {
  error: true;
  status: number;
  message: string;
  code: string;
  details?: ErrorDetail[];
}

export function errorBody(status: number, code: string, message: string, details?: ErrorDetail[]): ErrorBody {
  return { error: true, status, message, code, ...(details?.length ? { details } : {}) };
}
