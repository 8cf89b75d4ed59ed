// Time as the app sees it. Its own module because everything decides by it (handlers, tasks, the
// crypto of tokens and keys) and none of those should import another's module to get it; tests freeze
// it (test/support TestClock).
export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };
