// The metrics answer's JSON (DECISIONS.md §8 "Usage metrics"), written into one buffer. A 30-day answer is
// five series of 8,640 `[time, value]` points, 2 MB of JSON: as arrays handed to res.json, building them
// (a Date and toISOString per step) and JSON.stringify cost more than the rest of the request together
// (the metrics bench). Here each step's time is written once and copied into each series, and each value
// is the text PostgreSQL gave (store.seriesText), copied byte by byte. A stored day's points
// (usage_day_series, days.ts) come written already and are copied whole.

import { DAY_MS } from './days.js';

const COMMA = 0x2c;
const CLOSE = 0x5d;
const MINUS = 0x2d;

/** Each step's time of day (`THH:MM:SS.mmmZ`) for a step length, made once: days repeat. */
const timesOfDay = new Map<number, string[]>();

function timesOfDayFor(stepMs: number): string[] {
  let times = timesOfDay.get(stepMs);
  if (!times) {
    times = [];
    for (let t = 0; t < DAY_MS; t += stepMs) times.push(new Date(t).toISOString().slice(10));
    timesOfDay.set(stepMs, times);
  }
  return times;
}

interface StepHeads {
  bytes: Buffer;
  at: Uint32Array;
}

/**
 * The latest heads of each period (step and count), which every answer until its next step shares:
 * they depend on nothing else.
 */
const latestHeads = new Map<string, { first: number; heads: StepHeads }>();

function stepHeads(first: number, count: number, stepMs: number): StepHeads {
  const key = `${stepMs}:${count}`;
  const latest = latestHeads.get(key);
  if (latest?.first === first) return latest.heads;
  const heads = makeStepHeads(first, count, stepMs);
  latestHeads.set(key, { first, heads });
  return heads;
}

/** `["<step's time>",` for each step, as toISOString writes the time, and where each one starts. */
function makeStepHeads(first: number, count: number, stepMs: number): StepHeads {
  const ofDay = timesOfDayFor(stepMs);
  const bytes = Buffer.allocUnsafe(count * 32);
  const at = new Uint32Array(count + 1);
  let day = Math.floor(first / DAY_MS) * DAY_MS;
  let date = new Date(day).toISOString().slice(0, 10);
  let j = (first - day) / stepMs;
  let o = 0;
  for (let i = 0; i < count; i++, j++) {
    if (j === ofDay.length) {
      day += DAY_MS;
      date = new Date(day).toISOString().slice(0, 10);
      j = 0;
    }
    at[i] = o;
    o += bytes.write(`["${date}${ofDay[j]}",`, o, 'latin1');
  }
  at[count] = o;
  return { bytes, at };
}

/**
 * A run of the answer's steps: computed live (`first`, `count` steps, each series' values as
 * store.seriesText gives them), or a stored day (usage_day_series) whose points are written already.
 */
export type SeriesPart =
  { first: number; count: number; values: Record<string, string> } | { points: Record<string, string> };

/**
 * `{"period":…,"step_seconds":…,"series":{name: [[time, value], …], …}}`: `series` maps each name to
 * its points, the parts' one after another. A value that is not a JSON number (NaN, ±Infinity) is
 * null, as JSON.stringify writes it.
 */
export function metricsJson(head: { period: string; step_seconds: number }, parts: SeriesPart[]): Buffer {
  const stepMs = head.step_seconds * 1000;
  const heads = parts.map((p) => ('points' in p ? null : stepHeads(p.first, p.count, stepMs)));
  const names = Object.keys(
    parts.length > 0 ? ('points' in parts[0]! ? parts[0].points : parts[0]!.values) : {},
  );
  const start = `${JSON.stringify(head).slice(0, -1)},"series":{`;
  let size = start.length + 2;
  for (const name of names) {
    size += name.length + 6 + parts.length;
    parts.forEach((p, k) => {
      size +=
        'points' in p
          ? p.points[name]!.length
          : heads[k]!.at[p.count]! + p.values[name]!.length + 2 * p.count;
    });
  }
  const out = Buffer.allocUnsafe(size);
  let o = out.write(start, 0, 'latin1');
  names.forEach((name, n) => {
    o += out.write(`${n === 0 ? '' : ','}"${name}":[`, o, 'latin1');
    parts.forEach((p, k) => {
      if (k > 0) out[o++] = COMMA;
      o +=
        'points' in p
          ? out.write(p.points[name]!, o, 'latin1')
          : writePoints(out, o, heads[k]!, p.count, name, p.values[name]!);
    });
    out[o++] = CLOSE;
  });
  out[o++] = 0x7d;
  out[o++] = 0x7d;
  return out.subarray(0, o);
}

/** `[time, value]` for each of `count` steps, comma-separated, at `o`; answers how many bytes. */
function writePoints(
  out: Buffer,
  from: number,
  steps: StepHeads,
  count: number,
  name: string,
  values: string,
): number {
  let o = from;
  let c = 0;
  for (let i = 0; i < count; i++) {
    if (c > values.length) throw new Error(`series ${name} has fewer than ${count} values`);
    if (i > 0) out[o++] = COMMA;
    // Byte by byte: a native copy per few bytes costs more than the loop (the metrics bench).
    for (let b = steps.at[i]!, e = steps.at[i + 1]!; b < e; b++) out[o++] = steps.bytes[b]!;
    const lead = values.charCodeAt(c) === MINUS ? values.charCodeAt(c + 1) : values.charCodeAt(c);
    // Digits, or "null": a JSON value already. "NaN", "Infinity", "-Infinity": not one.
    if (lead === 0x4e || lead === 0x49) {
      o += out.write('null', o, 'latin1');
      while (c < values.length && values.charCodeAt(c) !== COMMA) c++;
    } else {
      for (let ch; c < values.length && (ch = values.charCodeAt(c)) !== COMMA; c++) out[o++] = ch;
    }
    c++;
    out[o++] = CLOSE;
  }
  if (c <= values.length) throw new Error(`series ${name} has more than ${count} values`);
  return o - from;
}
