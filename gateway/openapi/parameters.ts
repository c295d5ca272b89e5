// The parameters of a route: its path variables, its query contract property by property, and
// its request headers.
import type { TSchema } from '@sinclair/typebox';
import type { DocumentedRoute } from './routes.ts';
import type { SchemaNamer } from './schemas.ts';

const PATH_VARIABLE = /:(\w+)/g;

/** `/v1/sessions/:sessionId` as OpenAPI writes it: `/v1/sessions/{sessionId}`. */
export const openApiPath = (path: string) => path.replace(PATH_VARIABLE, '{$1}');

const PATH_DESCRIPTIONS: Record<string, string> = {
  sessionId: 'the `_id` of a session',
  sourceId: 'the `id` of a sensor source of the session',
};

export function parameters(route: DocumentedRoute, namer: SchemaNamer) {
  const path = [...route.path.matchAll(PATH_VARIABLE)].map(([, name = '']) => ({
    name,
    in: 'path',
    required: true,
    description: PATH_DESCRIPTIONS[name] ?? name,
    schema: { type: 'string' },
  }));
  const properties: Record<string, TSchema> = route.query?.properties ?? {};
  const required = new Set(route.query?.required ?? []);
  const query = Object.entries(properties).map(([name, schema]) => ({
    name,
    in: 'query',
    // A property with a default is required by the contract only because the gateway fills it in.
    required: required.has(name) && schema.default === undefined,
    schema: namer.schema(schema),
  }));
  const expand = properties.expand;
  if (route.expandArray && expand) {
    query.push({
      name: 'expand[]',
      in: 'query',
      required: false,
      schema: { type: 'array', items: namer.schema(expand), description: 'the form of the original API: the same as `expand`, repeated or not' },
    });
  }
  const headers = Object.entries(route.headers ?? {}).map(([name, schema]) => ({
    name,
    in: 'header',
    required: false,
    schema: namer.schema(schema),
  }));
  return [...path, ...query, ...headers];
}
