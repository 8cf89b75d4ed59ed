// /auth/reset-password?token=T, the link of the password-reset mail: sets a new password.
/* global api, say, show, busy */
const token = new URLSearchParams(location.search).get('token');
const form = document.getElementById('reset');

if (!token) {
  say(
    'failed',
    'This link has no token. Open the whole link from the mail, or copy all of it into the address bar.',
  );
  show('reset', false);
}

form.addEventListener('submit', (event) => {
  event.preventDefault();
  const password = form.elements.password.value;
  if (password !== form.elements.repeat.value) {
    say('failed', 'The two passwords differ. Type the same new password twice.');
    return;
  }
  void busy(form, async () => {
    say('working', 'Setting your new password…');
    const answer = await api('POST', 'auth/password/reset', { body: { password, token } });
    if (answer.ok) {
      form.reset();
      show('reset', false);
      say(
        'done',
        'Your new password is set. Every session of your account was signed out: sign in again with the new password.',
      );
      show('next');
    } else {
      say('failed', answer.detail);
    }
  });
});
