// `expand` as clients of the original API send it: the array form `expand[]=session`, possibly
// repeated, beside this API's `expand=session`. The contracts know one form, `expand: 'session'`,
// so the other forms are folded into it here, before validation.
import { badRequest } from '../../bus/errors.ts';

type Query = Record<string, string | string[] | undefined>;

const EXPANDABLE = 'session';

/** The query with every form of `expand` folded into `expand`; an unknown value is a 400 naming its field. */
export function foldExpand(query: Query): Query {
  const array = query['expand[]'];
  // Today's single `expand=...` (or none) is the contract's own form: validated as it always was.
  if (array === undefined && !Array.isArray(query.expand)) return query;
  for (const key of ['expand', 'expand[]']) {
    for (const value of ([] as string[]).concat(query[key] ?? [])) {
      if (value !== EXPANDABLE) {
        const message = `must be ${EXPANDABLE}`;
        throw badRequest('invalid_query', `query.${key}: ${message}`, [{ field: `query.${key}`, message }]);
      }
    }
  }
  const { 'expand[]': _array, ...rest } = query;
  return { ...rest, expand: EXPANDABLE };
}
