// Types of scripts/build-app.mjs (plain JavaScript so that it runs before anything is compiled).

/** Whether dist/app holds a build of the current sources. */
export function appBuildIsFresh(): boolean;
/** Builds dist/app (the contracts first when they changed); a one-line summary. */
export function buildApp(log?: (line: string) => void): Promise<string>;
/** The file URL of dist/app/main.js, rebuilt first when stale. */
export function ensureAppBuild(): Promise<string>;
