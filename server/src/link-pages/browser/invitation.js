// /invitations/ID, the link of an invitation mail: sign in with the invited address (password, then
// the emailed code), see the invitation, accept or decline it. The session lives in this page only
// (never stored) and is signed out once the decision is made or the page is left.
/* global api, say, show, busy */
const invitationId = decodeURIComponent(location.pathname.split('/').pop());
const signIn = document.getElementById('sign-in');
const codeForm = document.getElementById('code');
let challengeId = null;
let session = null;

function step(id) {
  for (const s of ['sign-in', 'code', 'invitation']) show(s, s === id);
}

async function signOut(keepalive = false) {
  if (!session) return;
  const { token, refresh_token: refreshToken } = session;
  session = null;
  await api('POST', 'auth/logout', { body: { refresh_token: refreshToken }, token, keepalive });
}

// Leaving the page ends its session; the request outlives the page (keepalive).
addEventListener('pagehide', () => void signOut(true));

signIn.addEventListener('submit', (event) => {
  event.preventDefault();
  const email = signIn.elements.email.value.trim();
  const password = signIn.elements.password.value;
  void busy(signIn, async () => {
    say('working', 'Checking your password…');
    const answer = await api('POST', 'auth/login', { body: { email, password } });
    if (!answer.ok) {
      say('failed', answer.detail);
      return;
    }
    challengeId = answer.data.challenge_id;
    signIn.elements.password.value = '';
    step('code');
    say('working', `A 6-digit sign-in code was emailed to ${email}. Type it here.`);
    codeForm.elements.code.focus();
  });
});

codeForm.addEventListener('submit', (event) => {
  event.preventDefault();
  const code = codeForm.elements.code.value.trim();
  void busy(codeForm, async () => {
    say('working', 'Signing in…');
    const answer = await api('POST', 'auth/login/verify', { body: { challenge_id: challengeId, code } });
    if (!answer.ok) {
      say('failed', answer.detail);
      return;
    }
    session = answer.data;
    codeForm.reset();
    await load();
  });
});

const STATUS_WORDS = {
  accepted: 'was accepted already',
  declined: 'was declined',
  revoked: 'was withdrawn by the organization',
  expired: 'has expired',
};

async function load() {
  const answer = await api('GET', `invitations/${encodeURIComponent(invitationId)}`, {
    token: session.token,
  });
  if (!answer.ok) {
    await signOut();
    step('sign-in');
    say(
      'failed',
      answer.status === 404
        ? 'There is no invitation at this link for this account. Sign in with the address the invitation was sent to, once that address is confirmed.'
        : answer.detail,
    );
    return;
  }
  const invitation = answer.data;
  document.getElementById('organization').textContent = invitation.organization_name;
  document.getElementById('inviter').textContent = invitation.inviter_name;
  document.getElementById('role').textContent = invitation.role;
  document.getElementById('expires').textContent = new Date(invitation.expires_at).toLocaleString();
  step('invitation');
  if (invitation.status === 'pending') {
    show('decide');
    say(
      'working',
      `Signed in as ${session.user.email ?? session.user.name}. Accept or decline the invitation.`,
    );
  } else {
    show('decide', false);
    say('failed', `This invitation ${STATUS_WORDS[invitation.status] ?? `is ${invitation.status}`}.`);
    await signOut();
  }
}

const decide = document.getElementById('decide');
for (const button of decide.querySelectorAll('button')) {
  button.addEventListener('click', () => {
    const action = button.value;
    void busy(decide, async () => {
      say('working', action === 'accept' ? 'Accepting…' : 'Declining…');
      const answer = await api('POST', `invitations/${encodeURIComponent(invitationId)}/${action}`, {
        token: session.token,
      });
      if (!answer.ok) {
        say('failed', answer.detail);
        return;
      }
      show('decide', false);
      const organization = document.getElementById('organization').textContent;
      say(
        'done',
        action === 'accept'
          ? `You are now a member of ${organization} (${answer.data.role}). This page has signed you out again.`
          : `You declined. ${organization} cannot invite you again for 30 days unless you allow it. This page has signed you out again.`,
      );
      await signOut();
    });
  });
}

step('sign-in');
