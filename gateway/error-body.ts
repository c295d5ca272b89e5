// The error body of the API, the same for every error and every transport. A contract like the
// others, so that the OpenAPI document describes it from the same schema the gateway's type is.
import { Type, type Static } from '@sinclair/typebox';
import type { ErrorDetail } from '../bus/errors.ts';

export const ErrorBody = Type.Object({
  error: Type.Literal(true),
  status: Type.Integer({ minimum: 400, maximum: 599 }),
  message: Type.String(),
  code: Type.String({ description: 'machine-readable: invalid_body, invalid_query, not_found, rate_limited, quota_exceeded, ...' }),
  details: Type.Optional(
    Type.Array(Type.Object({ field: Type.String(), message: Type.String() }), {
      description: 'each offending field, such as body.name or query.limit',
    }),
  ),
});
export type ErrorBody = Static<typeof ErrorBody>;

export function errorBody(status: number, code: string, message: string, details?: ErrorDetail[]): ErrorBody {
  return { error: true, status, message, code, ...(details?.length ? { details } : {}) };
}
