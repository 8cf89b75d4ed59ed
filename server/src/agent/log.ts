// The agent's log: one JSON line per event on stdout, which the local driver sends to agent.log. Lines
// say what happened and why; never a contract's content, which may carry the customer's data.
export interface AgentLog {
  info(msg: string): void;
  warn(msg: string): void;
}

export function agentLog(out: NodeJS.WritableStream = process.stdout): AgentLog {
  const line = (level: 'info' | 'warn', msg: string) =>
    out.write(`${JSON.stringify({ time: new Date().toISOString(), level, pid: process.pid, msg })}\n`);
  return { info: (msg) => line('info', msg), warn: (msg) => line('warn', msg) };
}
