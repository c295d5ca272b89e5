// The OpenAPI 3.1 document of the REST API, built from the route table and the TypeBox
// contracts; the gateway builds it once at start and serves it at GET /v1/openapi.json.
import { parameters, openApiPath } from './parameters.ts';
import { errorResponses, headers, responseHeaders } from './responses.ts';
import { documentedRoutes, type DocumentedRoute } from './routes.ts';
import { SchemaNamer } from './schemas.ts';

export type OpenApiDocument = ReturnType<typeof openApiDocument>;

export function openApiDocument() {
  const namer = new SchemaNamer();
  const paths: Record<string, Record<string, object>> = {};
  for (const route of documentedRoutes) {
    (paths[openApiPath(route.path)] ??= {})[route.method] = operation(route, namer);
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'emotion-stream',
      version: '1',
      description:
        'Live-stream emotion analysis: sessions, their results read back as timelines, and custom sensor events. ' +
        'Every request but this document carries `Authorization: Bearer <token>`. ' +
        'The WebSocket API (`/ws/v1`) is not described here.',
    },
    security: [{ bearer: [] }],
    tags: [
      { name: 'sessions', description: 'create, list, read, rename, stop and delete sessions' },
      { name: 'results', description: 'what the analysis found, per session' },
      { name: 'events', description: 'custom sensor sources and their events' },
      { name: 'document', description: 'this description of the API' },
    ],
    paths,
    components: {
      schemas: namer.components(),
      headers,
      securitySchemes: {
        bearer: { type: 'http', scheme: 'bearer', description: 'a token of AUTH_TOKENS_FILE, or an HS256 JWT (`sub`: the user, `product`: the product)' },
      },
    },
  };
}

function operation(route: DocumentedRoute, namer: SchemaNamer) {
  const { status, description, schema } = route.success;
  return {
    operationId: route.operationId,
    summary: route.summary,
    tags: [route.tag],
    ...(route.public ? { security: [] } : {}),
    parameters: parameters(route, namer),
    ...(route.body ? { requestBody: { required: true, content: { 'application/json': { schema: namer.schema(route.body) } } } } : {}),
    responses: {
      [String(status)]: {
        description,
        headers: responseHeaders(route, status),
        ...(schema ? { content: { 'application/json': { schema: namer.schema(schema) } } } : {}),
      },
      ...errorResponses(route),
    },
  };
}
