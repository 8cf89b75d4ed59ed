// The gateway's WebSocket close codes, as the ticket operations document them (spec/paths/consoles.yaml).
export const CLOSE = {
  /** The console, shell or screen ended (the unit stopped, the shell exited). */
  ended: 1000,
  /** The gateway is shutting down. */
  goingAway: 1001,
  /** A screen client that does not speak RFB 3.8. */
  protocol: 1002,
  /** A frame over the size cap (ws sends it itself). */
  tooLarge: 1009,
  internal: 1011,
  /** The caller's access ended (membership, role, session, token, service). */
  accessEnded: 4001,
  /** A shell idle for SHELL_IDLE_SECONDS. */
  idle: 4002,
  /** A shell open for SHELL_MAX_SECONDS. */
  maxLength: 4003,
  /** A shell control message out of range or malformed. */
  badControl: 4004,
} as const;
