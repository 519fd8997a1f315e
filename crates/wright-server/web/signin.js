// The sign-in page: the pasted key goes to `POST /auth` (same origin; the server sets the
// session cookie), then the browser goes where it was headed — the UI's page it opened
// (its `#/…` never reaches the server), or the one-time address's `next`.

const form = document.getElementById("signin");
const key = document.getElementById("key");
const error = document.getElementById("signin-error");
const why = document.getElementById("signin-why");

const params = new URLSearchParams(location.search);
if (location.pathname === "/auth") {
  why.textContent = "That sign-in address was wrong or was used already: each one opens once.";
}
// Where to go once signed in: the page this browser opened (its hash as it is at the
// click: it may have changed since the page loaded), or the address's `next`.
const next = () => (location.pathname === "/auth" ? params.get("next") || "/" : `/${location.hash}`);

form.addEventListener("submit", async (event) => {
  event.preventDefault();
  error.textContent = "";
  let response;
  try {
    response = await fetch("/auth", {
      method: "POST",
      credentials: "same-origin",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ key: key.value.trim(), next: next() }),
    });
  } catch (err) {
    error.textContent = `The server did not answer (${err.message}).`;
    return;
  }
  let body = null;
  try {
    body = await response.json();
  } catch {
    body = null;
  }
  if (!response.ok) {
    error.textContent = body && typeof body.message === "string" ? body.message : `${response.status} ${response.statusText}`;
    return;
  }
  // The server said where (a path of its own); a change of the hash alone reloads nothing.
  const target = new URL(body && typeof body.next === "string" ? body.next : "/", location.origin);
  if (target.origin !== location.origin) return;
  if (target.pathname === location.pathname && target.search === location.search) {
    location.hash = target.hash;
    location.reload();
  } else {
    location.assign(target.href);
  }
});
