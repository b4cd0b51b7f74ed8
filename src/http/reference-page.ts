/**
 * An API's reference page (GET <routePrefix>, answered at <routePrefix>/ too) from its OpenAPI
 * document, the same for both APIs. The page and its script come from the installed
 * @scalar/fastify-api-reference: nothing is fetched from a CDN, and fonts, telemetry, the AI agent,
 * the developer toolbar, MCP and the request proxy (which would send "try it" calls through
 * scalar.com) are off.
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
      // Their Share, Deploy and MCP buttons would send the document to scalar.com.
      showDeveloperTools: 'never',
      mcp: { disabled: true },
    },
  });
}
