// The job kinds by name, with the payload each takes: all the queue knows of them. The handlers live
// with their areas (mail/tasks.ts, operations/tasks.ts, ...) and are registered at the composition
// root (server/src/tasks.ts), which checks that every name here has exactly one handler. A name is
// what the queue stores; renaming one strands its waiting jobs, so names stay.

/** What the crontab puts in a periodic job's payload. */
export interface PeriodicPayload {
  _cron?: { ts: string; backfilled: boolean };
}

export interface SendMailPayload {
  id: string;
}

export interface CompleteSignupPayload {
  /** The pending_signups row; the password hash stays there, never in the queue's payloads. */
  id: string;
}

export interface SendPasswordResetPayload {
  email: string;
  /** Where the link points (the request's checked origin). */
  base: string;
}

export interface RunOperationPayload {
  operation_id: string;
}

export interface ConvergePayload {
  service_instance_id: string;
}

export interface DeleteBackupPayload {
  backup_id: string;
}

export interface PublishGameSubdomainPayload {
  id: string;
}

export interface IssueCertificatePayload {
  /** The http_names row. */
  id: string;
}

export interface ApplyMachineAccessPayload {
  /** The VPS's virtual_machine resource; its credentials are read from vps_access when the job runs. */
  resource_id: string;
}

/** The payload each task takes, for enqueue(). */
export interface TaskPayloads {
  send_mail: SendMailPayload;
  complete_signup: CompleteSignupPayload;
  send_password_reset: SendPasswordResetPayload;
  run_operation: RunOperationPayload;
  converge_service: ConvergePayload;
  delete_backup: DeleteBackupPayload;
  publish_game_subdomain: PublishGameSubdomainPayload;
  issue_certificate: IssueCertificatePayload;
  apply_machine_access: ApplyMachineAccessPayload;

  requeue_stranded_mail: PeriodicPayload;
  prune_rate_limit_buckets: PeriodicPayload;
  prune_login_challenges: PeriodicPayload;
  prune_finished_mail: PeriodicPayload;
  prune_signing_keys: PeriodicPayload;
  prune_oauth_flows: PeriodicPayload;
  recheck_domains: PeriodicPayload;
  prune_idempotency_keys: PeriodicPayload;
  requeue_stranded_operations: PeriodicPayload;
  renew_certificates: PeriodicPayload;
  reconcile_units: PeriodicPayload;
  run_due_schedules: PeriodicPayload;
  sample_usage: PeriodicPayload;
  roll_up_usage: PeriodicPayload;
}

export type TaskName = keyof TaskPayloads;
