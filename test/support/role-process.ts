/**
 * One `tokex start --role …` as a real OS process, for the scale-out tests: resolves once its
 * banner is printed, keeps everything it printed for assertions and failure messages.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { OPERATOR_ACCOUNT } from '../../src/chain/anvil-accounts.ts';
import { SENDER_ROLE_SPECS, SENDER_ROLES } from '../../src/chain/operator-roles.ts';

/** The roles `tokex status` reports for the whole stack of one chain, in the order it lists them. */
export const STATUS_ROLES = ['marketdata', 'indexer', 'perp-indexer', 'executor', 'relayer', 'perp-engine', 'projector'] as const;

/**
 * The keys of a stack on an external anvil (RPC_URL): the deployer's, and each sending role's own
 * key and address from its well-known anvil account (src/chain/operator-roles.ts).
 */
export function senderKeysEnv(): Record<string, string> {
  const env: Record<string, string> = { OPERATOR_PRIVATE_KEY: OPERATOR_ACCOUNT.privateKey };
  for (const role of SENDER_ROLES) {
    const spec = SENDER_ROLE_SPECS[role];
    env[spec.keyEnv] = spec.devAccount.privateKey;
    env[spec.addressEnv] = spec.devAccount.address;
  }
  return env;
}

/**
 * What every `tokex start` process of a stack on the external anvil at `rpcUrl` is started with: its
 * data in `dataDir`, the demo deployment with each sending role's key, free API ports, one day of
 * history, warnings only.
 */
export function roleProcessEnv(dataDir: string, rpcUrl: string): Record<string, string> {
  return {
    DATA_DIR: dataDir,
    RPC_URL: rpcUrl,
    ...senderKeysEnv(),
    DEMO_MODE: 'true',
    STOCK_API_PORT: '0',
    PERP_API_PORT: '0',
    HISTORY_DAYS: '1',
    LOG_LEVEL: 'warn',
  };
}

export interface RoleProcess {
  label: string;
  child: ChildProcess;
  /** Everything printed so far (stdout and stderr). */
  output(): string;
  /** The base URL an API role printed, `http://host:port`. */
  baseUrl(venue: 'stock' | 'perp'): string;
  /** SIGKILL, resolved once the process is gone. */
  kill(signal?: NodeJS.Signals): Promise<number | null>;
}

/** `args`: more of `tokex start`'s options (`--chain 31338`). */
export function startRoleProcess(roles: string, env: NodeJS.ProcessEnv, label = roles, args: readonly string[] = []): Promise<RoleProcess> {
  const child = spawn(process.execPath, ['bin/tokex.mjs', 'start', '--role', roles, ...args], { env: { ...process.env, METRICS_PORT: '0', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  const handle: RoleProcess = {
    label,
    child,
    output: () => out,
    baseUrl(venue) {
      const re = venue === 'stock' ? /stock API\s+(https?:\/\/[^\s]+)\/api\/v1/ : /perp API\s+(https?:\/\/[^\s]+)\/v4\/public\/trader/;
      const m = re.exec(out);
      if (!m) throw new Error(`${label}: no ${venue} API in its banner`);
      return m[1];
    },
    kill(signal = 'SIGKILL') {
      if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(child.exitCode);
      const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
      child.kill(signal);
      return exited;
    },
  };
  return new Promise((resolve, reject) => {
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.includes(`tokex ${roles} running`) && out.includes('Ctrl-C')) resolve(handle);
    });
    child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
    child.once('exit', (code) => reject(new Error(`${label} exited with ${code}: ${out.slice(-3000)}`)));
  });
}
