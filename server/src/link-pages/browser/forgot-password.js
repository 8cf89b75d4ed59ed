// /auth/forgot-password: asks for a reset link (the mail about a sign-up with a known address links here).
/* global api, say, busy */
const form = document.getElementById('forgot');

form.addEventListener('submit', (event) => {
  event.preventDefault();
  const email = form.elements.email.value.trim();
  void busy(form, async () => {
    say('working', 'Sending…');
    const answer = await api('POST', 'auth/password/forgot', { body: { email } });
    if (answer.ok) {
      say(
        'done',
        `If ${email} has an account, a link to set a new password is on its way. It works once, for a limited time.`,
      );
    } else {
      say('failed', answer.detail);
    }
  });
});
