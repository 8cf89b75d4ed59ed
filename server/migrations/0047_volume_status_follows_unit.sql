-- A volume's status follows the units on it (DECISIONS.md §8): `running` only while one of them runs,
-- else what its first unit says (stopped after a power stop or a suspension, failed, reinstalling, ...).
-- Every writer of a unit's status (provisioning, power, reinstall, convergence after a suspension) moves
-- the volume with it here, so no writer can forget it. A volume without units keeps its own status.
create function volume_status_of(volume uuid) returns text language sql stable as $$
  select status from service_resources
  where volume_id = volume and deleted_at is null and kind <> 'volume'
  order by (status = 'running') desc, created_at, id
  limit 1
$$;

create function volume_follows_unit() returns trigger language plpgsql as $$
declare
  followed text;
begin
  if new.volume_id is null then
    return null;
  end if;
  followed := volume_status_of(new.volume_id);
  if followed is not null then
    update service_resources set status = followed, updated_at = new.updated_at
    where id = new.volume_id and deleted_at is null and status <> followed;
  end if;
  return null;
end
$$;

-- Only a unit's row fires it, so the volume's own update does not fire it again.
create trigger volume_follows_unit
  after insert or update of status, deleted_at, volume_id on service_resources
  for each row when (new.kind <> 'volume') execute function volume_follows_unit();

-- Volumes already out of step with their units.
update service_resources v set status = volume_status_of(v.id)
where v.kind = 'volume' and v.deleted_at is null
  and volume_status_of(v.id) is not null and v.status <> volume_status_of(v.id);
