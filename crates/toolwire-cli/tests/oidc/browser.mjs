// The browser of the OAuth client tests: `$BROWSER` for `toolwire auth
// login`. Follows redirects from the authorization URL, keeping cookies,
// until the last answer (the loopback listener's); exits non-zero if that
// answer is not a success.
//
// Usage: node browser.mjs URL
const jar = new Map();
let url = process.argv[2];
for (let hop = 0; hop < 20; hop++) {
  const cookie = [...jar].map(([k, v]) => `${k}=${v}`).join('; ');
  const res = await fetch(url, { redirect: 'manual', headers: cookie ? { cookie } : {} });
  for (const c of res.headers.getSetCookie()) {
    const pair = c.split(';')[0];
    const eq = pair.indexOf('=');
    if (eq > 0) jar.set(pair.slice(0, eq), pair.slice(eq + 1));
  }
  const location = res.headers.get('location');
  if (!location) {
    const body = await res.text();
    if (!res.ok) console.error(`browser: ${url} answered ${res.status}: ${body.slice(0, 300)}`);
    process.exit(res.ok ? 0 : 1);
  }
  url = new URL(location, url).toString();
}
console.error('browser: too many redirects');
process.exit(1);
