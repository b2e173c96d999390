// The emulator's control API (emulator/README.md, "Control API") for the
// Node scripts of this folder and bench/.
'use strict';

// emulatorClient(port): {base, ctl} for the emulator on 127.0.0.1:port,
// where ctl(method, path, body) is the JSON answer of /_emulator/PATH and
// throws unless it is 200.
function emulatorClient(port) {
  const base = `http://127.0.0.1:${port}`;
  async function ctl(method, path, body) {
    const res = await fetch(base + '/_emulator/' + path, {
      method,
      headers: { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const json = await res.json();
    if (res.status !== 200) {
      throw new Error(`control ${method} ${path} -> ${res.status} ${JSON.stringify(json)}`);
    }
    return json;
  }
  return { base, ctl };
}

module.exports = { emulatorClient };
