import { $, api, config, key, loadCapabilities, whenRefused } from "./core.js";
import { forgetPeople, loadPeople } from "./people.js";
import { route } from "./router.js";

// ---- sign-in: the key is checked against the API, and a refused one is said plainly
whenRefused((sentence) => signedOut(sentence));
export function signedOut(message) {
  $("signin").classList.remove("hidden");
  $("signin-error").textContent = message || "";
  $("key-state").textContent = message ? "not signed in" : "";
  $("sign-out").classList.add("hidden");
  $("api-key").classList.remove("hidden"); $("sign-in").classList.remove("hidden");
  document.body.classList.add("signed-out");
  forgetPeople();
}
export async function checkKey() {
  if (!key()) { signedOut($("signin-error").textContent); return false; }  // (a failed sign-in's sentence stays)
  try {
    const data = await api("GET", "/status");
    $("signin").classList.add("hidden"); $("signin-error").textContent = "";
    const people = await loadPeople(true);
    const who = people && people.me.user ? " as " + people.me.user : "";
    $("key-state").textContent = "Signed in · tenant " + data.tenant + who;
    $("sign-out").classList.remove("hidden");
    $("api-key").classList.add("hidden"); $("sign-in").classList.add("hidden");
    document.body.classList.remove("signed-out");
    await loadCapabilities();
    return true;
  } catch (err) {
    if (!$("signin-error").textContent) signedOut(String(err.message));
    return false;
  }
}
// ---- signing in through the organisation's identity provider (Cognito's hosted UI, or the configured OIDC
// issuer): the authorization code flow with PKCE (RFC 7636), as a public client: no secret in the page.
// The verifier stays in this tab (sessionStorage) and only its SHA-256 travels to the provider; the state
// ties the answer to this request. The ID token it gives is what the API's JWT authorizer checks.
export const b64url = (bytes) => btoa(String.fromCharCode(...new Uint8Array(bytes))).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
export const redirectUri = () => location.origin + "/";
export async function startSignIn() {
  const verifier = b64url(crypto.getRandomValues(new Uint8Array(32)));
  const state = b64url(crypto.getRandomValues(new Uint8Array(16)));
  const challenge = b64url(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(verifier)));
  sessionStorage.setItem("semfs-pkce", JSON.stringify({ verifier, state, back: location.hash }));
  const query = new URLSearchParams({
    response_type: "code", client_id: config.auth.client_id, redirect_uri: redirectUri(),
    scope: config.auth.scope || "openid email", state, code_challenge: challenge, code_challenge_method: "S256",
  });
  location.assign(config.auth.authorize_url + "?" + query);
}
export async function finishSignIn() {  // the provider sent the person back with ?code=…&state=… (or ?error=…)
  const answer = new URLSearchParams(location.search);
  if (!config.auth || !(answer.has("code") || answer.has("error"))) return;
  const saved = JSON.parse(sessionStorage.getItem("semfs-pkce") || "null");
  sessionStorage.removeItem("semfs-pkce");
  history.replaceState(null, "", location.pathname + ((saved && saved.back) || ""));  // the code is single-use
  if (answer.has("error") || !saved || answer.get("state") !== saved.state) {
    signedOut("Sign-in did not finish" + (answer.get("error") === "access_denied" ? ": access was refused." : ". Try again."));
    return;
  }
  try {
    const res = await fetch(config.auth.token_url, {
      method: "POST", headers: { "Content-Type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ grant_type: "authorization_code", client_id: config.auth.client_id,
        code: answer.get("code"), redirect_uri: redirectUri(), code_verifier: saved.verifier }),
    });
    const tokens = await res.json().catch(() => ({}));
    if (!res.ok || !tokens.id_token) throw new Error(tokens.error || String(res.status));
    sessionStorage.setItem("semfs-token", tokens.id_token);
  } catch (err) { signedOut("Sign-in did not finish (" + err.message + "). Try again."); }
}
$("sign-in-here").addEventListener("click", () => startSignIn());
$("key-form").addEventListener("submit", async (e) => {
  e.preventDefault();
  if (config.auth) { await startSignIn(); return; }
  const typed = $("api-key").value.trim(); if (!typed) return;
  localStorage.setItem("semfs-key", typed); $("api-key").value = "";
  if (await checkKey()) route(); else localStorage.removeItem("semfs-key");
});
$("sign-out").addEventListener("click", () => {
  if (config.auth) {  // the provider's session ends too, or its next sign-in would not ask
    sessionStorage.removeItem("semfs-token");
    const query = new URLSearchParams({ client_id: config.auth.client_id, logout_uri: redirectUri() });
    if (config.auth.logout_url) { location.assign(config.auth.logout_url + "?" + query); return; }
    signedOut("");
    return;
  }
  localStorage.removeItem("semfs-key"); signedOut("");
});
