/**
 * `tokex upgrade` (docs/upgrades.md): what this release needs to run on the deployment and data the
 * environment names (DATA_DIR or DATABASE_URL, the embedded chain or RPC_URL), as a dry run that
 * changes nothing; `--apply` carries it out. Run it with the stack stopped: on the embedded chain it
 * starts anvil on the data directory's state itself.
 */
import path from 'node:path';
import { Command } from 'commander';
import { loadConfig } from '../config/app-config.ts';
import { APP_VERSION } from '../config/build-info.ts';
import { AppError } from '../errors/app-error.ts';

export function upgradeCommand(): Command {
  return new Command('upgrade')
    .description('what this release needs to upgrade the contracts and the database in place (a dry run), or --apply it')
    .option('--apply', 'carry the plan out (contracts first, then the database)')
    .option('--chain <id>', "the chain whose contracts and database (its own record and namespace) are upgraded (default: the first chain)")
    .action(async (o: { apply?: boolean; chain?: string }) => {
      const { buildContracts } = await import('../chain/contract-build.ts');
      buildContracts();
      const served = loadConfig();
      const { parseChainIds, servedChainConfig } = await import('../app/chain-venues.ts');
      const chosen = o.chain === undefined ? [served.chainId] : parseChainIds(o.chain);
      if (chosen.length !== 1) throw new AppError('VALIDATION', '--chain: one chain id (run the command once per chain)');
      // Another chain's configuration: its node (RPC_URL_<id> or its embedded anvil's state under
      // DATA_DIR/chains/<id>), its deployment record there and its database namespace.
      const config = servedChainConfig(served, chosen[0]);
      const [{ startAnvil }, { createChainClients, SETUP_RPC_TIMEOUT_MS }, { OPERATOR_ACCOUNT }, { readDeploymentRecord, writeDeploymentRecord }, upgrade, layouts, { deploymentPath }] = await Promise.all([
        import('../chain/anvil-process.ts'),
        import('../chain/chain-client.ts'),
        import('../chain/anvil-accounts.ts'),
        import('../chain/deployment-file.ts'),
        import('../chain/venue-upgrade.ts'),
        import('../chain/upgrade-layout-check.ts'),
        import('../app/chain-wiring.ts'),
      ]);
      const out = (line: string) => process.stdout.write(`${line}\n`);
      out(`tokex ${APP_VERSION}: ${o.apply ? 'upgrading' : 'upgrade plan (dry run: nothing is changed; --apply carries it out)'}${served.stockChains.length > 1 ? ` on chain ${config.chainId}` : ''}`);

      const file = deploymentPath(config);
      const read = await readDeploymentRecord(file);
      let stopChain = async () => {};
      let flushState: (() => Promise<void>) | undefined;
      try {
        if (!read || read.record.chainId !== config.chainId) {
          out(`contracts: no deployment of chain ${config.chainId} recorded in ${file}: nothing to upgrade (a start deploys them)`);
        } else {
          const plan = upgrade.planUpgrade(read.record);
          for (const line of upgrade.describePlan(plan)) out(`contracts: ${line}`);
          upgrade.assertNotNewer(plan);
          const legacy = plan.venues.filter((v) => v.state === 'legacy');
          if (legacy.length > 0) {
            out('contracts: the migration (docs/upgrades.md, "Deployments from before the proxies"): open stock orders are cancelled (reason MIGRATED, locks returned), the old contracts frozen, every balance, holding, queued operation and One Click delegation and the vault\'s collateral moved to new upgradeable contracts, reconciled per token; the journal is kept beside the record');
          }
          const work = plan.venues.some((v) => v.state === 'upgrade' || v.state === 'legacy');
          if (o.apply && work) {
            let rpcUrl = config.rpcUrl;
            if (!rpcUrl) {
              const anvil = await startAnvil({ port: 0, host: '127.0.0.1', chainId: config.chainId, stateFile: path.join(config.dataDir, 'anvil-state.json') });
              stopChain = () => anvil.stop();
              flushState = () => anvil.flushState();
              rpcUrl = anvil.rpcUrl;
            }
            const key = config.upgraderPrivateKey ?? config.operatorPrivateKey ?? (config.rpcUrl ? undefined : OPERATOR_ACCOUNT.privateKey);
            if (!key) throw new AppError('VALIDATION', 'an upgrade needs the upgrade authority\'s key: set UPGRADER_PRIVATE_KEY (or OPERATOR_PRIVATE_KEY when the deployer holds the authority)');
            const { publicClient, walletClient } = createChainClients({ rpcUrl, chainId: config.chainId, operatorPrivateKey: key, timeoutMs: SETUP_RPC_TIMEOUT_MS });
            if (legacy.length > 0) {
              // The owner of the old contracts moves them (the deployer's key), with the database at hand.
              const ownerKey = config.operatorPrivateKey ?? (config.rpcUrl ? undefined : OPERATOR_ACCOUNT.privateKey);
              if (!ownerKey) throw new AppError('VALIDATION', 'the migration needs the old contracts\' owner key: set OPERATOR_PRIVATE_KEY');
              const owner = createChainClients({ rpcUrl, chainId: config.chainId, operatorPrivateKey: ownerKey, timeoutMs: SETUP_RPC_TIMEOUT_MS }).walletClient!;
              const [{ openAppDatabase }, { migrateLegacyDeployment, migrationRoles }, { createLogger }, { senderAddress }, { guardianAddressOf }] = await Promise.all([
                import('../app/storage-wiring.ts'),
                import('../app/legacy-venue-migration.ts'),
                import('../lib/logger.ts'),
                import('../chain/operator-roles.ts'),
                import('../chain/anvil-accounts.ts'),
              ]);
              const db = await openAppDatabase(config);
              try {
                const migrated = await migrateLegacyDeployment({ db, publicClient, ownerWallet: owner, record: read.record, file, logger: createLogger({ name: 'upgrade', level: process.env.UPGRADE_LOG_LEVEL ?? 'error' }), onStep: (line) => out(`contracts: ${line}`), durable: flushState, withdrawalCap: config.perpWithdrawalCap, roles: migrationRoles((role) => senderAddress(role, { keys: { shared: config.operatorPrivateKey, own: config.roleKeys, addresses: config.roleAddresses }, embeddedAnvil: !config.rpcUrl, allInOneProcess: true }), guardianAddressOf(config)) });
                if (migrated) read.record = migrated.record;
              } finally {
                await db.close();
              }
            }
            const { done, pending: waiting } = await upgrade.applyUpgrade({
              publicClient,
              upgraderWallet: walletClient!,
              record: read.record,
              save: async (r) => {
                await flushState?.();
                await writeDeploymentRecord(file, r);
              },
              checkLayout: (step) => layouts.checkUpgradeLayout(step, file),
              onStep: (line) => out(`contracts: ${line}`),
            });
            if (waiting.length > 0) {
              const at = new Date(Math.max(...waiting.map((w) => w.readyAt)) * 1000).toISOString();
              out(`contracts: ${done.length} change(s) made; ${waiting.length} upgrade(s) scheduled in the timelock, executable at ${at}: run tokex upgrade --apply again then`);
            } else {
              out(`contracts: ${done.length} change(s) made; the record (${file}) says release ${APP_VERSION}`);
            }
          } else if (!work) {
            out('contracts: nothing to do');
          }
        }

        const { pendingMigrations, openDatabase } = await import('../storage/database.ts');
        const { sqlitePathOf } = await import('../app/storage-wiring.ts');
        const where = { url: config.databaseUrl, schema: config.databaseUrl ? config.databaseSchema : undefined, sqlitePath: sqlitePathOf(config) };
        const pending = await pendingMigrations(where);
        // The upgrades the indexers recorded (each proxy's `Upgraded` event), newest last.
        if (pending.length === 0) {
          const db = await openDatabase({ ...where, migrate: false }).catch(() => undefined);
          if (db) {
            try {
              const rows = await db.kysely
                .selectFrom('chain_events')
                .select(['block_number', 'address', 'args', 'indexer'])
                .where('event_name', '=', 'Upgraded')
                .orderBy('block_number')
                .execute();
              for (const r of rows) out(`history: block ${r.block_number} ${r.indexer} ${r.address} → implementation ${(JSON.parse(r.args) as { implementation?: string }).implementation ?? '?'}`);
            } finally {
              await db.close();
            }
          }
        }
        // SQLite: a file from before 0.2.0's 4 KiB pages keeps its 64 KiB ones until rewritten (sqlite-page-size.ts).
        const { SQLITE_PAGE_SIZE, readSqlitePages, rewriteSqlitePages } = await import('../storage/sqlite-page-size.ts');
        const pages = config.databaseUrl ? undefined : readSqlitePages(where.sqlitePath);
        const repage = pages !== undefined && pages.pageSize !== SQLITE_PAGE_SIZE;
        if (pending.length > 0) out(`database: ${pending.length} migration(s) to run: ${pending.join(', ')}`);
        if (repage) {
          const mib = ((pages.pageSize * pages.pageCount) / 2 ** 20).toFixed(1);
          out(`database: pages of ${pages.pageSize} bytes, this release writes ${SQLITE_PAGE_SIZE} (the order path's commits write a fraction of the bytes): the file is rewritten (VACUUM, ${mib} MiB copied, the stack stopped)`);
        }
        if (pending.length === 0 && !repage) out('database: nothing to do');
        if (o.apply && pending.length > 0) {
          const db = await openDatabase(where);
          await db.close();
          out(`database: migrated (${pending.length})`);
        }
        if (o.apply && repage) {
          const { before, after } = rewriteSqlitePages(where.sqlitePath);
          out(`database: pages rewritten, ${before} → ${after} bytes`);
        }
        const others = served.stockChains.map((c) => c.chainId).filter((id) => id !== config.chainId);
        if (others.length > 0) out(`other chains: ${others.join(', ')} (each with its own contracts and database: tokex upgrade --chain <id>)`);
      } finally {
        await stopChain();
      }
    });
}
