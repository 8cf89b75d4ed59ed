// The usage sampler (DECISIONS.md §8 "Usage metrics"): every 10 s, each running unit's usage as the
// substrate measures it, summed per service and written in one batch. The slot is claimed in
// PostgreSQL first, so however many processes sample, each slot is measured once. Rates (CPU percent,
// bytes per second) come from the previous slot's counters; without a recent one, or after a counter
// went back (the unit restarted), the rate is a gap, never guessed.
import { setTimeout as sleep } from 'node:timers/promises';
import type { TaskContext } from '../../jobs/context.js';
import type { UnitUsage } from '../../substrate/driver.js';
import { DAY_MS, dayOf, STEP_MS } from './days.js';
import * as store from './store.js';

export const SAMPLE_MS = 10_000;
/** A previous sample older than this gives no rate: the gap between is not one step. */
const RATE_WINDOW_MS = 3 * SAMPLE_MS;
/** Units measured at once. */
const PARALLEL = 8;

export const slotOf = (at: Date): Date => new Date(Math.floor(at.getTime() / SAMPLE_MS) * SAMPLE_MS);

/** Sums a field over units; null when no unit reports it. */
function total(usages: UnitUsage[], key: keyof UnitUsage): number | null {
  const known = usages.map((u) => u[key]).filter((v): v is number => v !== null);
  return known.length === 0 ? null : known.reduce((a, b) => a + b, 0);
}

function rate(now: number | null, before: number | null, seconds: number): number | null {
  if (now === null || before === null || now < before || seconds <= 0) return null;
  return (now - before) / seconds;
}

async function measure(ctx: TaskContext, units: store.SampledUnit[]): Promise<Map<string, UnitUsage[]>> {
  const byService = new Map<string, UnitUsage[]>();
  for (let i = 0; i < units.length; i += PARALLEL) {
    const batch = units.slice(i, i + PARALLEL);
    const usages = await Promise.all(
      batch.map((u) => ctx.substrate.unitUsage(u.unit_id, u.volume_id).catch(() => null)),
    );
    batch.forEach((u, j) => {
      const usage = usages[j];
      if (!usage) return;
      byService.set(u.service_instance_id, [...(byService.get(u.service_instance_id) ?? []), usage]);
    });
  }
  return byService;
}

/** Samples slot `at` if this process claims it; answers how many services were measured (null: not ours). */
export async function sampleSlot(ctx: TaskContext, at: Date): Promise<number | null> {
  const slot = slotOf(at);
  if (!(await store.claimSlot(ctx.sql, slot, ctx.clock.now()))) return null;
  const units = await store.sampledUnits(ctx.sql);
  const cpuOf = new Map(units.map((u) => [u.service_instance_id, u.cpu]));
  const measured = await measure(ctx, units);
  const previous = await store.latestSamples(ctx.sql, new Date(slot.getTime() - RATE_WINDOW_MS));
  const rows: store.SampleRow[] = [];
  for (const [serviceId, usages] of measured) {
    const before = previous.get(serviceId);
    const seconds = before ? (slot.getTime() - before.at.getTime()) / 1000 : 0;
    const cpuNs = total(usages, 'cpuNanoseconds');
    const rx = total(usages, 'networkRxBytes');
    const tx = total(usages, 'networkTxBytes');
    const cpuPerSecond = rate(cpuNs, before?.cpu_ns ?? null, seconds);
    rows.push({
      service_instance_id: serviceId,
      at: slot,
      cpu_percent: cpuPerSecond === null ? null : (cpuPerSecond / 1e9 / cpuOf.get(serviceId)!) * 100,
      memory_bytes: total(usages, 'memoryBytes'),
      disk_bytes: total(usages, 'diskBytes'),
      network_rx_bps: rate(rx, before?.rx_bytes ?? null, seconds),
      network_tx_bps: rate(tx, before?.tx_bytes ?? null, seconds),
      cpu_ns: cpuNs,
      rx_bytes: rx,
      tx_bytes: tx,
    });
  }
  await store.insertSamples(ctx.sql, rows);
  return rows.length;
}

/**
 * One periodic tick (a minute): the six slots of the minute, each sampled when it begins. The ticks of
 * the periodic task never overlap; the slot claim keeps a second process's sampler from measuring twice.
 */
export async function sampleMinute(ctx: TaskContext): Promise<void> {
  const first = slotOf(ctx.clock.now()).getTime();
  for (let i = 0; i < 60_000 / SAMPLE_MS; i++) {
    const at = first + i * SAMPLE_MS;
    const wait = at - ctx.clock.now().getTime();
    // A stopping worker does not wait out the minute (its stop would hang for as long).
    if (wait > 0) await sleep(wait, undefined, { signal: ctx.stopping }).catch(() => undefined);
    if (ctx.stopping.aborted) return;
    await sampleSlot(ctx, new Date(at)).catch((err: unknown) => ctx.log.warn({ err }, 'usage sample failed'));
  }
}

/**
 * Rolls finished 5-minute steps up, prunes what is past keeping, then stores each day that can no
 * longer change (days.ts): one that ended before the rolled-up 24 hours, whose raw samples are gone
 * (pruned just now), and that began inside the 30 days kept (none of its steps pruned).
 */
export async function rollUpAndPrune(ctx: TaskContext): Promise<void> {
  const now = ctx.clock.now();
  const until = new Date(Math.floor(now.getTime() / STEP_MS) * STEP_MS);
  await store.rollUp(ctx.sql, new Date(until.getTime() - 24 * 3600_000), until);
  await store.prune(ctx.sql, now);
  const firstKept = Math.ceil((now.getTime() - 30 * DAY_MS) / DAY_MS) * DAY_MS;
  const lastFinished = Math.floor((until.getTime() - DAY_MS) / DAY_MS) * DAY_MS - DAY_MS;
  await store.pruneDaySeries(ctx.sql, dayOf(firstKept));
  if (firstKept > lastFinished) return;
  for (const day of await store.pendingDays(ctx.sql, dayOf(firstKept), dayOf(lastFinished)))
    await store.writeDaySeries(ctx.sql, day);
}
