/**
 * The storage-layout check can fail, and says which variable: releases of a small UUPS contract
 * (test/chain/fixtures/storage-layout/v1/Box.sol, importing @openzeppelin/contracts-upgradeable, and
 * variants of it made below) compiled with the build's settings and judged by upgrades-core as the
 * build judges contracts/.
 */
import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { analyzeSoliditySources, type ContractUpgradeInfo } from '../../src/chain/contract-build.ts';
import { checkRelease, compareLayouts } from '../../src/chain/storage-layout.ts';

const DIR = 'test/chain/fixtures/storage-layout';
const VARIANTS = ['v1', 'v2-inserted', 'v2-appended', 'v2-retyped', 'v2-namespace-inserted', 'unsafe-immutable'] as const;
type Variant = (typeof VARIANTS)[number];

/**
 * Every variant is release 1 with the edits listed, [text of release 1, what it becomes]: the one
 * difference each test judges stands here in view, rather than in a copy of the whole contract.
 */
const EDITS: Record<Exclude<Variant, 'v1'>, Array<[string, string]>> = {
  // Release 2, incompatible: `fee` inserted before `price` moves `price` and `credit` one slot on.
  'v2-inserted': [['    uint256 public price;\n', '    uint256 public fee;\n    uint256 public price;\n']],
  // Release 2, compatible: `fee` appended after the variables release 1 wrote.
  'v2-appended': [['uint256) public credit;\n', 'uint256) public credit;\n    uint256 public fee;\n']],
  // Release 2, incompatible: `price` changed from uint256 to address.
  'v2-retyped': [
    ['uint256 public price;', 'address public price;'],
    ['setPrice(uint256 price_)', 'setPrice(address price_)'],
  ],
  // Release 2, incompatible: `epoch` inserted before `keeper` in the ERC-7201 namespace.
  'v2-namespace-inserted': [['    struct BoxStorage {\n', '    struct BoxStorage {\n        uint64 epoch;\n']],
  // Not upgrade-safe: the immutable `cap` lacks the unsafe-allow annotation that `limit` has.
  'unsafe-immutable': [
    [
      'uint256) public credit;\n',
      'uint256) public credit;\n' +
        '    /// @custom:oz-upgrades-unsafe-allow state-variable-immutable\n' +
        '    uint256 public immutable limit;\n' +
        '    uint256 public immutable cap;\n',
    ],
    ['    constructor() {\n', '    constructor(uint256 cap_) {\n        limit = 2 * cap_;\n        cap = cap_;\n'],
  ],
};

function variantSource(release1: string, variant: Variant): string {
  if (variant === 'v1') return release1;
  return EDITS[variant].reduce((text, [from, to]) => {
    // An edit that no longer finds its text would compile release 1 again under another name.
    if (!text.includes(from)) throw new Error(`${variant}: release 1 no longer has ${JSON.stringify(from)}`);
    return text.replace(from, to);
  }, release1);
}

let box: Record<Variant, ContractUpgradeInfo>;

beforeAll(() => {
  // One compilation for all variants: each is a `Box` in its own source unit, named as if it lay
  // beside release 1 (the reports below name it so).
  const release1 = readFileSync(new URL('fixtures/storage-layout/v1/Box.sol', import.meta.url), 'utf8');
  const analyzed = analyzeSoliditySources(Object.fromEntries(VARIANTS.map((v) => [`${DIR}/${v}/Box.sol`, variantSource(release1, v)])));
  box = Object.fromEntries(VARIANTS.map((v) => [v, analyzed[`${DIR}/${v}/Box.sol:Box`]])) as Record<Variant, ContractUpgradeInfo>;
});

describe('storage-layout check on fixtures', () => {
  it('judges release 1 upgradeable and upgrade-safe, with its variables at the slots solc gave them', () => {
    const v1 = box.v1;
    expect(v1.upgradeable).toBe(true);
    expect(v1.errors).toEqual([]);
    expect(v1.upgradeSafe).toBe(true);
    expect(v1.layout.storage.map((s) => [s.label, s.slot, s.offset])).toEqual([
      ['price', '0', 0],
      ['credit', '1', 0],
    ]);
    // The namespaced compilation gives ERC-7201 members their slots (OpenZeppelin's parents' too).
    expect(v1.layout.namespaces?.['erc7201:tokex.fixture.Box']?.map((s) => [s.label, s.slot, s.offset])).toEqual([['keeper', '0', 0]]);
    expect(v1.layout.namespaces?.['erc7201:openzeppelin.storage.Ownable']?.map((s) => s.label)).toEqual(['_owner']);
    expect(compareLayouts(v1.layout, v1.layout)).toEqual({ ok: true, report: 'compatible' });
  });

  it('refuses a variable inserted before an existing one, naming it', () => {
    const result = compareLayouts(box.v1.layout, box['v2-inserted'].layout);
    expect(result.ok).toBe(false);
    expect(result.report).toContain('Inserted `fee`');
    expect(result.report).toContain(`${DIR}/v2-inserted/Box.sol:`);
  });

  it('accepts a variable appended after the existing ones', () => {
    expect(compareLayouts(box.v1.layout, box['v2-appended'].layout)).toEqual({ ok: true, report: 'compatible' });
  });

  it('refuses a deleted variable, naming it', () => {
    const result = compareLayouts(box['v2-appended'].layout, box.v1.layout);
    expect(result.ok).toBe(false);
    expect(result.report).toContain('Deleted `fee`');
  });

  it('refuses a variable whose type changed from uint256 to address, naming it', () => {
    const result = compareLayouts(box.v1.layout, box['v2-retyped'].layout);
    expect(result.ok).toBe(false);
    expect(result.report).toContain('Upgraded `price` to an incompatible type');
    expect(result.report).toContain('Bad upgrade from uint256 to address');
  });

  it('refuses a member inserted into an ERC-7201 namespace, naming it', () => {
    const next = box['v2-namespace-inserted'].layout;
    expect(next.namespaces?.['erc7201:tokex.fixture.Box']?.map((s) => [s.label, s.slot, s.offset])).toEqual([
      ['epoch', '0', 0],
      ['keeper', '0', 8],
    ]);
    const result = compareLayouts(box.v1.layout, next);
    expect(result.ok).toBe(false);
    expect(result.report).toContain('Inserted `epoch`');
  });

  it('reports an immutable without the unsafe-allow annotation as not upgrade-safe, and only that one', () => {
    const unsafe = box['unsafe-immutable'];
    expect(unsafe.upgradeSafe).toBe(false);
    expect(unsafe.errors).toHaveLength(1);
    expect(unsafe.errors[0]).toContain('Variable `cap` is immutable');
    expect(unsafe.errors[0]).toContain(`${DIR}/unsafe-immutable/Box.sol:`);
    expect(unsafe.errors.join('\n')).not.toContain('`limit`');
  });

  it('checks a release contract by contract: new ones pass, changed and removed ones are reported', () => {
    const results = checkRelease(
      { Box: box.v1.layout, Gone: box.v1.layout, Same: box.v1.layout },
      { Box: box['v2-inserted'].layout, New: box.v1.layout, Same: box['v2-appended'].layout },
    );
    expect(results.map((r) => [r.contract, r.ok])).toEqual([
      ['Box', false],
      ['Gone', false],
      ['New', true],
      ['Same', true],
    ]);
    expect(results[0].report).toContain('Inserted `fee`');
    expect(results[1].report).toContain('Gone is in the previous release but not in this one');
  });
});
