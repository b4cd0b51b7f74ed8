/**
 * An API's reference page (GET <routePrefix>, answered at <routePrefix>/ too) from its OpenAPI
 * document, the same for both APIs: Scalar's page (@scalar/core's HTML and the script bundled in
 * the installed @scalar/fastify-api-reference). Nothing is fetched from a CDN, and fonts, telemetry,
 * the developer toolbar and the request proxy (which would send "try it" calls through scalar.com)
 * are off.
 *
 * The routes are Scalar's Fastify plugin's (the page, its script at js/scalar.js, the document at
 * openapi.json and openapi.yaml beside it), registered here rather than by the plugin because the
 * plugin reads its 3.5 MB script at every registration: four times per start of the venue (two
 * docs paths on each API), about 20 ms of every sandbox revert (docs/performance.md, "The sandbox").
 * The script is read here once per process, at its first request.
 */
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { getHtmlDocument } from '@scalar/core/libs/html-rendering';

/** What the page is told (Scalar's configuration): the document beside it, nothing from elsewhere. */
const CONFIGURATION = {
  _integration: 'fastify',
  withDefaultFonts: false,
  telemetry: false,
  proxyUrl: '',
  agent: { disabled: true },
  // Their Share and Deploy buttons would send the document to scalar.com. (1.46.4, the last
  // release whose dependencies support Node 20, has no MCP button to turn off.)
  showDeveloperTools: 'never',
  // Relative: the page works behind a proxy that moves it.
  url: './openapi.json',
  cdn: 'js/scalar.js',
} as const;

let script: Buffer | undefined;
/** Scalar's standalone bundle, as its plugin serves it (its dist/js/standalone.js). */
function scalarScript(): Buffer {
  if (script === undefined) {
    const entry = createRequire(import.meta.url).resolve('@scalar/fastify-api-reference');
    script = fs.readFileSync(path.join(path.dirname(entry), 'js', 'standalone.js'));
  }
  return script;
}

const hidden = { schema: { hide: true } };

export async function registerReferencePage(app: FastifyInstance, opts: { routePrefix: `/${string}`; title: string }): Promise<void> {
  const prefix = opts.routePrefix.endsWith('/') ? opts.routePrefix.slice(0, -1) : opts.routePrefix;
  const html = getHtmlDocument({ ...CONFIGURATION, pageTitle: opts.title } as Parameters<typeof getHtmlDocument>[0]);
  // The document's title as a file name: `Stock trading API` → stock-trading-api.json.
  const filename = () => (app.swagger().info?.title ?? 'spec').toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '') || 'spec';
  const documentHeaders = { 'access-control-allow-origin': '*', 'access-control-allow-methods': '*' };
  app.get(prefix, hidden, async (request, reply) => reply.redirect(`${new URL(request.url, 'http://x').pathname}/`, 301));
  app.get(`${prefix}/`, hidden, async (_request, reply) => reply.header('content-type', 'text/html; charset=utf-8').send(html));
  app.get(`${prefix}/js/scalar.js`, hidden, async (_request, reply) => reply.header('content-type', 'application/javascript; charset=utf-8').send(scalarScript()));
  app.get(`${prefix}/openapi.json`, hidden, async (_request, reply) =>
    reply.headers({ ...documentHeaders, 'content-type': 'application/json', 'content-disposition': `filename=${filename()}.json` }).send(app.swagger()),
  );
  app.get(`${prefix}/openapi.yaml`, hidden, async (_request, reply) => {
    // Loaded at the first request: the YAML writer is not worth a start's time.
    const { toYaml } = await import('@scalar/openapi-parser');
    return reply.headers({ ...documentHeaders, 'content-type': 'application/yaml', 'content-disposition': `filename=${filename()}.yaml` }).send(toYaml(app.swagger()));
  });
}
