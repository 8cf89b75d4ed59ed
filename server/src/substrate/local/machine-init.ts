// What a local machine (a VPS) runs, confined as its root with root's capabilities inside its own
// namespaces (sandbox/): OpenSSH's sshd (Debian's openssh-server), on the machine's address inside its
// network namespace, port 22, where the edge forwards the VPS's system allocation. The machine's image is
// this host's Debian userland (/usr, read-only) with the volume's rootfs/ as its `/`: the accounts, the
// SSH configuration and keys, root's home are the machine's own files. What a fresh or older install
// lacks is made here at boot, as a distribution's first boot would; what the customer changed is kept.
//
// Password sign-in works only while root has a password (the platform writes its hash to /etc/shadow;
// `*` there means none); keys are read from /root/.ssh/authorized_keys at each attempt.
const SSHD_CONFIG = `# Written at first boot by the platform; yours to change.
Port 22
ListenAddress 0.0.0.0
HostKey /etc/ssh/ssh_host_ed25519_key
HostKey /etc/ssh/ssh_host_ecdsa_key
PidFile /run/sshd.pid
UsePAM no
PermitRootLogin yes
PasswordAuthentication yes
KbdInteractiveAuthentication no
PubkeyAuthentication yes
AuthorizedKeysFile .ssh/authorized_keys
PrintMotd no
Subsystem sftp internal-sftp
`;

const BOOT = `set -e
umask 022
mkdir -p /etc/ssh /run/sshd /root /home /var/log /var/tmp
chmod 700 /root
[ -s /etc/passwd ] || printf '%s\\n' 'root:x:0:0:root:/root:/bin/bash' 'nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin' > /etc/passwd
grep -q '^sshd:' /etc/passwd || echo 'sshd:x:100:65534::/run/sshd:/usr/sbin/nologin' >> /etc/passwd
[ -s /etc/group ] || printf '%s\\n' 'root:x:0:' 'nogroup:x:65534:' > /etc/group
[ -e /etc/shadow ] || echo 'root:*:19000:0:99999:7:::' > /etc/shadow
chmod 600 /etc/shadow
[ -e /etc/ssh/sshd_config ] || printf '%s' "$SVC_SSHD_CONFIG" > /etc/ssh/sshd_config
# Ed25519 and ECDSA host keys only: made in milliseconds (an RSA key takes seconds), known to every client.
[ -e /etc/ssh/ssh_host_ed25519_key ] || ssh-keygen -q -t ed25519 -N '' -f /etc/ssh/ssh_host_ed25519_key
[ -e /etc/ssh/ssh_host_ecdsa_key ] || ssh-keygen -q -t ecdsa -N '' -f /etc/ssh/ssh_host_ecdsa_key
exec /usr/sbin/sshd -D -e
`;

/** The machine's init: boots its files, then becomes sshd. */
export function machineInitCommand(): { command: string[]; env: Record<string, string> } {
  return { command: ['/bin/sh', '-c', BOOT], env: { SVC_SSHD_CONFIG: SSHD_CONFIG } };
}
