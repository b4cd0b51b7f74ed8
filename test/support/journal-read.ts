/** The whole perp journal of a database, in journal order, read in pages as a large one needs. */
import { readJournalAfter, type JournalRow } from '../../src/perp/store/engine-journal-store.ts';

export async function readWholeJournal(db: Parameters<typeof readJournalAfter>[0]): Promise<JournalRow[]> {
  const all: JournalRow[] = [];
  for (;;) {
    const page = await readJournalAfter(db, all.length === 0 ? 0 : all[all.length - 1].seq, 5_000);
    all.push(...page);
    if (page.length < 5_000) return all;
  }
}
