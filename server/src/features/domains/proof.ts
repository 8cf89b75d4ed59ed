// Looking for a claim's proof in live DNS, and saying in the service's own words why it was not found
// (document 1, "Domain verification": `last_error` is "the service's own sentence"). A resolver's
// error code never reaches a caller.
import { lookupTxt, MAX_CNAME_HOPS, type DnsOptions, type TxtFailure } from '../../dns/resolver.js';

export type ProofOutcome =
  | { kind: 'found' }
  /** The servers answered, and no record holds the value: the proof is not there. */
  | { kind: 'absent'; error: string }
  /** No usable answer: whether the proof is there is unknown. */
  | { kind: 'unanswered'; error: string };

export async function findProof(recordName: string, value: string, dns: DnsOptions): Promise<ProofOutcome> {
  const answer = await lookupTxt(recordName, dns);
  if (!answer.ok) return failed(recordName, answer.failure);
  // Exactly the value, among any number of records (one may be split into several strings).
  if (answer.records.includes(value)) return { kind: 'found' };
  const via = answer.chain.length > 1 ? ` (through the CNAME ${answer.chain.slice(1).join(' → ')})` : '';
  const others = answer.records.length;
  const found =
    others === 0
      ? ''
      : others === 1
        ? ' The one TXT record there holds another value.'
        : ` The ${others} TXT records there hold other values.`;
  return { kind: 'absent', error: `No TXT record with the expected value at ${recordName}${via}.${found}` };
}

function failed(recordName: string, failure: TxtFailure): ProofOutcome {
  switch (failure) {
    case 'cname-chain':
      return {
        kind: 'absent',
        error: `The CNAME records from ${recordName} loop or chain more than ${MAX_CNAME_HOPS} names.`,
      };
    case 'timeout':
      return { kind: 'unanswered', error: 'The DNS servers did not answer in time.' };
    case 'server-failure':
      return {
        kind: 'unanswered',
        error: `The DNS servers could not resolve ${recordName} (server failure).`,
      };
    case 'refused':
      return { kind: 'unanswered', error: `The DNS servers refused to resolve ${recordName}.` };
    case 'unreachable':
      return { kind: 'unanswered', error: 'The DNS servers could not be reached.' };
    case 'error':
      return { kind: 'unanswered', error: `The DNS lookup of ${recordName} failed.` };
  }
}
