// /auth/verify-email?token=T, the link of the sign-up mail: confirms the address as soon as it opens.
/* global api, say, show */
const token = new URLSearchParams(location.search).get('token');

async function verify() {
  if (!token) {
    say(
      'failed',
      'This link has no token. Open the whole link from the mail, or copy all of it into the address bar.',
    );
    return;
  }
  say('working', 'Confirming your email address…');
  const answer = await api('POST', 'auth/password/verify', { body: { token } });
  if (answer.ok) {
    say('done', 'Your email address is confirmed.');
    show('next');
  } else if (answer.status === 400) {
    say(
      'failed',
      'This link is invalid, has expired or was already used. If you confirmed your address already, just sign in.',
    );
    show('next');
  } else {
    say('failed', answer.detail);
  }
}

void verify();
