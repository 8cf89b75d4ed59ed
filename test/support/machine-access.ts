// Credentials a test hands the substrate as the platform would (DECISIONS.md §8 "VPS access"): a fresh
// root password, which only the test keeps, and its digests for the machine.
import {
  machinePasswordDigest,
  newMachinePassword,
  type MachineCredentials,
} from '../../server/src/substrate/machine-credentials.js';

export interface TestAccess {
  username: 'root';
  password: string;
  credentials: MachineCredentials;
}

export async function passwordAccess(authorizedKeys: string[] = []): Promise<TestAccess> {
  const password = newMachinePassword();
  return {
    username: 'root',
    password,
    credentials: { authorizedKeys, password: await machinePasswordDigest(password) },
  };
}
