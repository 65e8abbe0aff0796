// node tables.mjs — markdown tables from results/run{1,2}-{A,B}.json (run k pairs A run 2k-1 with B run 2k)
import { readFileSync, existsSync } from 'node:fs';
const f = (x) => (Number.isFinite(x) ? x.toFixed(1) : '-');
const load = (n, w) => { const p = `results/run${n}-${w}.json`; return existsSync(p) ? JSON.parse(readFileSync(p)) : null; };
const pairs = [[1, 2], [3, 4]];
pairs.forEach(([na, nb], k) => {
  const A = load(na, 'A'), B = load(nb, 'B');
  if (!A || !B) return;
  console.log(`\n### Pair ${k + 1}: A = run ${na}, B = run ${nb}\n`);
  console.log('| phase | A median ms | A max ms | A refused | B median ms | B max ms | B refused |');
  console.log('|---|---:|---:|---:|---:|---:|---:|');
  A.phases.forEach((pa, i) => { const pb = B.phases[i];
    console.log(`| ${pa.phase} | ${f(pa.median)} | ${f(pa.max)} | ${pa.refused} | ${f(pb.median)} | ${f(pb.max)} | ${pb.refused} |`); });
  console.log('\n| phase 3 query | A median ms | B median ms | B/A |');
  console.log('|---|---:|---:|---:|');
  A.phase3.forEach((qa, i) => { const qb = B.phase3[i];
    console.log(`| ${qa.sql.length > 60 ? qa.sql.slice(0, 57) + '...' : qa.sql} | ${f(qa.median)}${qa.refused ? ` (${qa.refused} refused)` : ''} | ${f(qb.median)}${qb.refused ? ` (${qb.refused} refused)` : ''} | ${(qb.median / qa.median).toFixed(2)} |`); });
});
