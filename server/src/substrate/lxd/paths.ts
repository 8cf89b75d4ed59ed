// Where things are inside a unit's instance: the agent's unit directory and the volume keep the local
// substrate's layout (DATA_DIR/units/<id>, DATA_DIR/volumes/<id>) under /svc, so the agent runs unchanged.
import { join } from 'node:path/posix';

export const UNIT_ROOT = '/svc';

export const unitDirIn = (unitId: string) => join(UNIT_ROOT, 'units', unitId);
export const volumeDirIn = (volumeId: string) => join(UNIT_ROOT, 'volumes', volumeId);
