// The one modal of the page (index.html's #confirm). A native modal <dialog> makes the rest of the
// page inert, so Tab stays inside it and Escape closes it; focus goes back where it was.

export function confirmDialog(title, text, action = 'Confirm') {
  const dialog = document.getElementById('confirm');
  const opener = document.activeElement;
  document.getElementById('confirm-title').textContent = title;
  document.getElementById('confirm-text').textContent = text;
  document.getElementById('confirm-ok').textContent = action;
  dialog.returnValue = '';
  dialog.showModal();
  return new Promise((resolve) =>
    dialog.addEventListener(
      'close',
      () => {
        if (opener instanceof HTMLElement && opener.isConnected) opener.focus();
        resolve(dialog.returnValue === 'ok');
      },
      { once: true },
    ),
  );
}
