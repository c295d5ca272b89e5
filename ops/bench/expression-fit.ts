// Fits what needs fitting on top of the expression classifiers (a per-class calibration, the
// ensemble's weight, a small logistic regression on both networks' outputs) on one part of the
// development set, and reports it on the other part and on the project's augmented test photos.
// None of them held up on the held-back part, so none is in the service (README-expressions.md).
//
//   node --import tsx ops/bench/expressions.ts --dir <dev set> --json dev.json
//   node --import tsx ops/bench/expressions.ts --json test.json
//   node --import tsx ops/bench/expression-fit.ts dev.json test.json
//
// The split is fixed: a photo is held back when the first byte of the sha256 of its person's
// name (the file name without its trailing _<number>) is odd. A person's photos stay on one side:
// many photos of one class come from one person (23 of the 40 disgusted ones are Dwarakish's),
// and a fit that saw that person would be judged on them.
//
// The calibration is a scale (a temperature) and one additive bias per class on the log of the
// per-second probabilities, fitted by gradient descent on the class-balanced cross-entropy of the
// fitting part's face-seconds, so each class weighs the same whatever its count. The ensemble's
// weight is picked from a grid by the fitting part's macro recall, with its own calibration. The
// logistic regression takes both networks' 14 log-probabilities, L2-regularised towards the
// first network's own answer.
// See ops/bench/README-expressions.md for the figures.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { basename, extname } from 'node:path';
import { EXPRESSION_CLASSES, type ExpressionClass } from '../../actors/face/index.ts';
import { fixed, printTable } from './lib/stats.ts';

interface FaceSecond {
  source: string;
  label: ExpressionClass;
  probabilities: number[];
}
interface Run {
  scores: { name: string; faceSeconds: FaceSecond[] }[];
}

const [devPath, testPath] = process.argv.slice(2);
if (!devPath || !testPath) throw new Error('usage: expression-fit.ts <dev.json> <test.json> (from ops/bench/expressions.ts --json)');
const dev = JSON.parse(readFileSync(devPath, 'utf8')) as Run;
const test = JSON.parse(readFileSync(testPath, 'utf8')) as Run;
const K = EXPRESSION_CLASSES.length;

const personOf = (source: string) => basename(source, extname(source)).replace(/_\d+$/, '');
const heldBack = (source: string) => (createHash('sha256').update(personOf(source)).digest()[0]! & 1) === 1;

function secondsOf(run: Run, name: string): FaceSecond[] {
  const score = run.scores.find((s) => s.name === name);
  if (!score) throw new Error(`no configuration '${name}' in the run`);
  return score.faceSeconds;
}

/** One face-second's features: log-probabilities of one or more configurations, and its label. */
interface Sample {
  x: number[];
  y: number;
  source: string;
}
const LOG_FLOOR = 1e-6;
function samples(run: Run, names: string[]): Sample[] {
  const parts = names.map((name) => secondsOf(run, name));
  // Each configuration scored the same face-seconds in the same order (same frames, one detector).
  if (parts.some((part) => part.length !== parts[0]!.length || part.some((s, i) => s.source !== parts[0]![i]!.source))) {
    throw new Error(`${names.join(' and ')} scored different face-seconds`);
  }
  return parts[0]!.map((second, i) => ({
    x: parts.flatMap((part) => part[i]!.probabilities.map((p) => Math.log(Math.max(p, LOG_FLOOR)))),
    y: EXPRESSION_CLASSES.indexOf(second.label),
    source: second.source,
  }));
}

/** A linear model: scores = W x + b (W absent: a times x's first K values, plus b). */
interface Model {
  W?: number[][];
  a: number;
  b: number[];
}
function scores(model: Model, x: number[]): number[] {
  return model.b.map((bias, k) => bias + (model.W ? model.W[k]!.reduce((sum, w, j) => sum + w * x[j]!, 0) : model.a * x[k]!));
}
const argmax = (values: number[]) => values.reduce((best, v, i) => (v > values[best]! ? i : best), 0);

/** Class-balanced softmax cross-entropy by plain gradient descent; L2 on W, or with `shrink` on the scale and biases, towards no change. */
function fit(data: Sample[], withWeights: boolean, l2 = 0.01, steps = 3000, rate = 0.5, shrink = 0): Model {
  const dims = data[0]!.x.length;
  const model: Model = { a: 1, b: new Array(K).fill(0) };
  if (withWeights) model.W = Array.from({ length: K }, (_, k) => Array.from({ length: dims }, (_, j) => (j === k ? 1 : 0)));
  const counts = new Array(K).fill(0);
  for (const s of data) counts[s.y]++;
  const weightOf = (y: number) => 1 / (K * counts[y]);
  for (let step = 0; step < steps; step++) {
    const gb = new Array(K).fill(0);
    let ga = 0;
    const gW = model.W?.map((row) => row.map(() => 0));
    for (const s of data) {
      const z = scores(model, s.x);
      const top = Math.max(...z);
      const e = z.map((v) => Math.exp(v - top));
      const total = e.reduce((a, v) => a + v, 0);
      const w = weightOf(s.y);
      for (let k = 0; k < K; k++) {
        const g = w * (e[k]! / total - (k === s.y ? 1 : 0));
        gb[k] += g;
        ga += g * s.x[k]!;
        if (gW) for (let j = 0; j < dims; j++) gW[k]![j]! += g * s.x[j]!;
      }
    }
    if (!model.W) model.a -= (rate / 10) * (ga + shrink * (model.a - 1));
    for (let k = 0; k < K; k++) {
      model.b[k]! -= rate * (gb[k]! + shrink * model.b[k]!);
      if (model.W && gW) for (let j = 0; j < dims; j++) model.W[k]![j]! -= rate * (gW[k]![j]! + l2 * (model.W[k]![j]! - (j === k ? 1 : 0)));
    }
  }
  // Only differences between classes matter: the neutral class's bias is 0.
  const shift = model.b[0]!;
  model.b = model.b.map((v) => v - shift);
  return model;
}

function evaluate(model: Model, data: Sample[]): { top1: number; macro: number; recall: number[] } {
  const hit = new Array(K).fill(0);
  const seen = new Array(K).fill(0);
  for (const s of data) {
    seen[s.y]++;
    if (argmax(scores(model, s.x)) === s.y) hit[s.y]++;
  }
  const recall = hit.map((h, k) => (seen[k] ? h / seen[k] : NaN));
  const present = recall.filter((r) => !Number.isNaN(r));
  return { top1: hit.reduce((a, v) => a + v, 0) / data.length, macro: present.reduce((a, v) => a + v, 0) / present.length, recall };
}

/** Probabilities of two configurations mixed with weight w for the first, as log-probabilities (the ensemble's average). */
function mixed(run: Run, first: string, second: string, w: number): Sample[] {
  const a = secondsOf(run, first);
  const b = secondsOf(run, second);
  return a.map((s, i) => ({
    x: s.probabilities.map((p, k) => Math.log(Math.max(w * p + (1 - w) * b[i]!.probabilities[k]!, LOG_FLOOR))),
    y: EXPRESSION_CLASSES.indexOf(s.label),
    source: s.source,
  }));
}

const allDev = samples(dev, ['baseline (all off)']);
const fitPart = (data: Sample[]) => data.filter((s) => !heldBack(s.source));
const heldPart = (data: Sample[]) => data.filter((s) => heldBack(s.source));
const count = (data: Sample[]) => EXPRESSION_CLASSES.map((_, k) => data.filter((s) => s.y === k).length).join('/');
console.log(`development set: ${allDev.length} face-seconds; fitting part ${fitPart(allDev).length} (${count(fitPart(allDev))}), held back ${heldPart(allDev).length} (${count(heldPart(allDev))}), per class ${EXPRESSION_CLASSES.join('/')}`);
const persons = (data: Sample[]) => new Set(data.map((s) => personOf(s.source))).size;
console.log(`persons: fitting ${persons(fitPart(allDev))}, held back ${persons(heldPart(allDev))}`);

const rows: string[][] = [];
const report = (name: string, model: Model, devData: Sample[], testData: Sample[]) => {
  const fitted = evaluate(model, fitPart(devData));
  const held = evaluate(model, heldPart(devData));
  const photos = evaluate(model, testData);
  rows.push([name, fixed(fitted.macro, 3), fixed(held.top1, 3), fixed(held.macro, 3), ...held.recall.map((r) => fixed(r, 2)), fixed(photos.top1, 3)]);
};
const NONE: Model = { a: 1, b: new Array(K).fill(0) };

// Every configuration both runs have, as it is: a setting without fitted numbers (a crop's
// framing, say) is chosen by the fitting part's macro recall too.
const inBoth = dev.scores.map((score) => score.name).filter((name) => test.scores.some((score) => score.name === name));
for (const base of inBoth) report(base, NONE, samples(dev, [base]), samples(test, [base]));
const has = (...names: string[]) => names.every((name) => inBoth.includes(name));
for (const base of ['baseline (all off)', 'align', 'flip', 'align + flip', 'ensemble', 'align + ensemble', 'smoothing 3'].filter((name) => has(name))) {
  const d = samples(dev, [base]);
  const t = samples(test, [base]);
  const model = fit(fitPart(d), false);
  report(`${base} + calibration`, model, d, t);
  report(`${base} + calibration, shrunk (0.05)`, fit(fitPart(d), false, 0, 3000, 0.5, 0.05), d, t);
  console.log(`scale ${model.a.toFixed(3)}, bias, ${base}: [${model.b.map((v) => v.toFixed(3)).join(', ')}]`);
}
// The ensemble with a weight and a bias, both fitted: the weight by the fitting part's macro recall.
for (const [first, second] of [
  ['baseline (all off)', 'mini-Xception alone'],
  ['align', 'mini-Xception alone + align'],
].filter((pair) => has(...pair))) {
  let best: { w: number; model: Model; macro: number } | undefined;
  for (const w of [0, 0.2, 0.4, 0.5, 0.6, 0.8, 1]) {
    const model = fit(fitPart(mixed(dev, first!, second!, w)), false);
    const macro = evaluate(model, fitPart(mixed(dev, first!, second!, w))).macro;
    if (!best || macro > best.macro) best = { w, model, macro };
  }
  report(`${first} + mini-Xception, weight ${best!.w} + calibration`, best!.model, mixed(dev, first!, second!, best!.w), mixed(test, first!, second!, best!.w));
  // A small logistic regression on both networks' log-probabilities (14 inputs, 7 classes).
  const both = [first!, second!];
  const d = samples(dev, both);
  report(`logistic regression on ${first} + mini-Xception`, fit(fitPart(d), true, 0.05, 3000, 0.05), d, samples(test, both));
}

printTable(
  'Fitted on the fitting part; macro recall there, then the held-back part; top-1 on the augmented test photos',
  ['configuration', 'fit macro', 'held top-1', 'held macro', ...EXPRESSION_CLASSES, 'test photos top-1'],
  rows,
);
