/**
 * An API's reference page (GET <routePrefix>, answered at <routePrefix>/ too) from its OpenAPI
 * document, the same for both APIs. The page and its script come from the installed
 * @scalar/fastify-api-reference: nothing is fetched from a CDN, and fonts, telemetry, the developer
 * toolbar and the request proxy (which would send "try it" calls through scalar.com) are off.
 */
import apiReference from '@scalar/fastify-api-reference';
import type { FastifyInstance } from 'fastify';

export async function registerReferencePage(app: FastifyInstance, opts: { routePrefix: `/${string}`; title: string }): Promise<void> {
  await app.register(apiReference, {
    routePrefix: opts.routePrefix,
    configuration: {
      pageTitle: opts.title,
      withDefaultFonts: false,
      telemetry: false,
      proxyUrl: '',
      agent: { disabled: true },
      // Their Share and Deploy buttons would send the document to scalar.com. (1.46.4, the last
      // release whose dependencies support Node 20, has no MCP button to turn off.)
      showDeveloperTools: 'never',
    },
  });
}
