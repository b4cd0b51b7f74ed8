import { kyselyOf, type DbExecutor } from './database.ts';

/** Small key/value facts the services keep across restarts (cursors, deployment ids, versions). */
export async function getMeta(db: DbExecutor, key: string): Promise<string | undefined> {
  const row = await kyselyOf(db).selectFrom('meta').select('value').where('key', '=', key).executeTakeFirst();
  return row?.value;
}

export async function setMeta(db: DbExecutor, key: string, value: string): Promise<void> {
  await kyselyOf(db)
    .insertInto('meta')
    .values({ key, value })
    .onConflict((oc) => oc.column('key').doUpdateSet({ value }))
    .execute();
}
