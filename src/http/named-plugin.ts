/**
 * Names a Fastify plugin for Fastify's registry. Without a name of its own Fastify looks for the
 * plugin in the whole CommonJS module cache at each register, twice (its getPluginName); for the
 * forty-odd route modules of a server that showed in the profile of a sandbox revert, which builds
 * the two APIs' servers again (docs/performance.md, "The sandbox").
 */
const DISPLAY_NAME = Symbol.for('fastify.display-name');

export function named<T extends (...args: any[]) => unknown>(plugin: T, name: string = plugin.name || 'anonymous plugin'): T {
  (plugin as T & { [DISPLAY_NAME]?: string })[DISPLAY_NAME] ??= name;
  return plugin;
}
