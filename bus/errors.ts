// Errors that cross the bus carry an HTTP status and a machine-readable code, so the gateway
// can answer with the error body of the API without knowing where the error came from.
export interface ErrorDetail {
  field: string;
  message: string;
}

export class ServiceError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details?: ErrorDetail[],
  ) {
    super(message);
    this.name = 'ServiceError';
  }
}

export const badRequest = (code: string, message: string, details?: ErrorDetail[]) =>
  new ServiceError(400, code, message, details);
export const notFound = (what = 'session') => new ServiceError(404, 'not_found', `${what} not found`);
export const overloaded = () =>
  new ServiceError(503, 'overloaded', 'no analysis capacity is free right now; retry later');
export const unavailable = (message: string) => new ServiceError(503, 'unavailable', message);
