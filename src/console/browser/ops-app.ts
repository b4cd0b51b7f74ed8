/// <reference lib="dom" />
/**
 * The operator page's script (docs/console.md, "Operator page"): reads `GET /console/ops/state`
 * every 5 s and renders it; Retry (a failed corporate action) and Revoke (a key, after a
 * confirmation) post to the page's own routes with `X-Tokex-Ops: 1`.
 */
import { formatCash } from './amount-format.ts';
import { $, actionButton, el, isoTime, type Row } from './dom.ts';

const REFRESH_MS = 5_000;

async function call<T>(method: string, url: string): Promise<T> {
  const init: RequestInit = { method, cache: 'no-store' };
  if (method !== 'GET') init.headers = { 'x-tokex-ops': '1', 'content-type': 'application/json' };
  if (method !== 'GET') init.body = '{}';
  const res = await fetch(url, init);
  const json = (await res.json()) as { code: number; errMsg?: string; data: T };
  if (json.code !== 200) throw new Error(json.errMsg ?? `HTTP ${res.status}`);
  return json.data;
}

const age = (ms: number | null | undefined) => (ms === null || ms === undefined ? '—' : ms < 10_000 ? `${(ms / 1000).toFixed(1)} s` : `${Math.round(ms / 1000)} s`);

function figures(detail: Row): string {
  return Object.entries(detail ?? {})
    .filter(([, v]) => v !== null && typeof v !== 'object')
    .map(([k, v]) => `${k}=${String(v)}`)
    .join(' ');
}

const rowOf = (cells: Array<string | HTMLElement>, classes: Array<string | undefined> = []) => {
  const tr = document.createElement('tr');
  cells.forEach((c, i) => {
    if (typeof c === 'string') tr.append(el('td', c, classes[i]));
    else {
      const td = el('td');
      td.append(c);
      tr.append(td);
    }
  });
  return tr;
};

function render(s: Row, act: (what: string, url: string, done: string) => void): void {
  $('ops-summary').textContent = s.ready ? 'All roles fresh: both APIs ready.' : `Not ready: ${s.summary}.`;
  $('ops-checked').textContent = `Checked ${isoTime(s.checkedAt)} (stale after ${Math.round(s.staleAfterMs / 1000)} s).`;
  $('apis').textContent = (s.apis as Row[]).map((a) => `${a.api} API: ${a.ready ? 'ready' : `not ready (waiting for ${a.waitingFor.join(', ')})`}`).join(' · ');
  $('roles').querySelector('tbody')!.replaceChildren(
    ...(s.roles as Row[]).map((r) => {
      const tr = rowOf([r.role, r.state, age(r.ageMs), r.lease ?? '—', r.holder ?? '—', figures(r.detail)], [undefined, r.state]);
      tr.dataset.role = r.role;
      return tr;
    }),
  );
  const halted = (s.symbols as Row[]).filter((x) => x.halted);
  $('halted-note').textContent = halted.length === 0 ? 'No symbol halted: every quote is fresh.' : `${halted.length} halted: ${halted.map((h) => h.symbol).join(', ')}.`;
  $('symbols').querySelector('tbody')!.replaceChildren(
    ...(s.symbols as Row[]).map((x) => {
      const tr = rowOf([x.symbol, x.halted ? 'halted' : 'trading', x.reason ?? '', x.last ?? '—', isoTime(x.quoteAt)], [undefined, x.halted ? 'halted' : 'ok']);
      tr.dataset.symbol = x.symbol;
      return tr;
    }),
  );
  $('corporate-actions').querySelector('tbody')!.replaceChildren(
    ...(s.corporateActions as Row[]).map((a) => {
      const actions = el('span');
      // One row per action and chain: each chain applies it with a state of its own, and a retry is that chain's.
      if (a.retryable) actions.append(actionButton('Retry', `corporate action ${a.actionId} on chain ${a.chainId}`, (b) => {
        b.disabled = true;
        act(`Retrying ${a.actionId} on chain ${a.chainId}…`, `/console/ops/corporate-actions/${encodeURIComponent(a.actionId)}/retry?chainId=${a.chainId}`, `${a.actionId} scheduled again on chain ${a.chainId}.`);
      }));
      const tr = rowOf([a.actionId, a.symbol, a.type, a.exDate, a.value, a.status ?? '—', a.reason ?? '', String(a.chainId), actions], [undefined, undefined, undefined, undefined, undefined, a.status ?? undefined]);
      tr.dataset.actionId = a.actionId;
      tr.dataset.chainId = String(a.chainId);
      return tr;
    }),
  );
  $('keys').querySelector('tbody')!.replaceChildren(
    ...(s.keys as Row[]).map((k) => {
      const actions = el('span');
      if (k.active) actions.append(actionButton('Revoke', `key ${k.apiKey}`, (b) => {
        if (!window.confirm(`Revoke API key ${k.apiKey} (${k.label})? Its clients are refused from now on.`)) return;
        b.disabled = true;
        act(`Revoking ${k.apiKey}…`, `/console/ops/keys/${encodeURIComponent(k.apiKey)}/revoke`, `Key ${k.apiKey} revoked.`);
      }));
      // Every scope of a stock key (`31337:Anchored:READ_ONLY`), a perp key's permissions.
      const tr = rowOf([k.apiKey, k.api, (k.scopeWords as string[]).join(', '), k.active ? 'active' : 'revoked', k.userAddress ?? '—', (k.ipWhitelist as string[]).join(', ') || '(none)', k.label, actions], [undefined, undefined, undefined, k.active ? 'ok' : 'failed']);
      tr.dataset.apiKey = k.apiKey;
      return tr;
    }),
  );
  const r = s.reserves as Row | null;
  const reserveRows: Array<[string, string]> = r
    ? [
        ['Epoch', `${r.epoch} (${isoTime(r.epoch)})`],
        ['State', r.status],
        ['Liabilities (sum of leaves)', `${formatCash(r.total)} USDC over ${r.leafCount} accounts`],
        ['Vault balance', r.vaultBalance === null ? '—' : `${formatCash(r.vaultBalance)} USDC`],
        ['Solvent', r.solvent === null ? 'not checked yet' : r.solvent ? 'yes: the vault holds at least the liabilities' : 'NO: the vault holds less than the liabilities'],
        ['Bad debt', `${formatCash(r.badDebt)} USDC`],
        ['Merkle root', r.root],
        ['Posted in', r.txHash ?? 'not posted yet'],
      ]
    : [['Epoch', 'none built yet']];
  $('reserves').querySelector('tbody')!.replaceChildren(
    ...reserveRows.map(([k, v]) => {
      const tr = document.createElement('tr');
      const th = el('th', k);
      th.setAttribute('scope', 'row');
      tr.append(th, el('td', v));
      return tr;
    }),
  );
  $('metrics').querySelector('tbody')!.replaceChildren(
    ...((s.metrics as Row[]).length === 0 ? [rowOf(['metrics are off in this process (METRICS_PORT=off)', '', ''])] : (s.metrics as Row[]).map((m) => rowOf([m.label, m.value, m.name]))),
  );
}

async function start(): Promise<void> {
  let busy = false;
  const refresh = async () => {
    if (busy) return;
    busy = true;
    try {
      render(await call<Row>('GET', '/console/ops/state'), act);
      $('errors').textContent = '';
    } catch (err) {
      $('errors').textContent = `Cannot read the stack's state: ${err instanceof Error ? err.message : String(err)}`;
    } finally {
      busy = false;
    }
  };
  const act = (what: string, url: string, done: string) => {
    $('ops-action').textContent = what;
    call<Row>('POST', url)
      .then(() => {
        $('ops-action').textContent = done;
      })
      .catch((err: unknown) => {
        $('ops-action').textContent = `Refused: ${err instanceof Error ? err.message : String(err)}`;
      })
      .finally(() => void refresh());
  };
  await refresh();
  setInterval(() => void refresh(), REFRESH_MS);
}

void start();
