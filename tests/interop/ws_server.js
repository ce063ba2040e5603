// rhea as an AMQP server over WebSocket (npm `ws`), optionally TLS with client certificates:
// the peer amqp-jms connects to with amqpws:// and amqpwss://. A tiny store-and-forward node:
// a message sent to an address is given to the next receiver of that address.
//
// Input (JSON on stdin):
//   {path: "/amqp", tls: {key, cert, ca} | null, connections: 1,
//    mechanisms: {ANONYMOUS: true, PLAIN: {user: pw}, EXTERNAL: true,
//                 XOAUTH2: {user: token}, "SCRAM-SHA-512": {user: pw}}}
// (mechanisms are offered in the order given; none given: no SASL layer)
// Prints {port} when listening, and after `connections` connections closed:
//   {upgrades: [{path, protocols, headers}], logins: [{mechanism, user}], messages: [...]}
const fs = require('fs');
const http = require('http');
const https = require('https');
const crypto = require('crypto');
const WebSocket = require('ws');
const rhea = require('rhea');

const input = JSON.parse(fs.readFileSync(0, 'utf8') || '{}');
const wantConnections = input.connections || 1;
const seen = {upgrades: [], logins: [], messages: []};
const stored = {};   // address -> [body]
let closed = 0;

function scram(passwords, hash, keyLen) {
  // RFC 5802 server side; the server-final message goes in a challenge (no additional-data)
  const H = d => crypto.createHash(hash).update(d).digest();
  const HMAC = (k, d) => crypto.createHmac(hash, k).update(d).digest();
  return function () {
    const m = {outcome: undefined, username: undefined};
    let first, serverFirst, salted, done = false;
    m.start = function (response) {
      first = response.toString('utf8').replace(/^n,,/, '');
      const attrs = Object.fromEntries(first.split(',').map(p => [p[0], p.slice(2)]));
      m.username = attrs.n;
      const salt = crypto.randomBytes(16);
      salted = crypto.pbkdf2Sync(passwords[attrs.n] || crypto.randomBytes(8), salt, 4096, keyLen, hash);
      serverFirst = `r=${attrs.r}${crypto.randomBytes(12).toString('base64')},s=${salt.toString('base64')},i=4096`;
      return Buffer.from(serverFirst);
    };
    m.step = function (response) {
      if (done) { m.outcome = true; return; }   // the empty response after server-final
      const text = response.toString('utf8');
      const i = text.lastIndexOf(',p=');
      const withoutProof = text.slice(0, i);
      const proof = Buffer.from(text.slice(i + 3), 'base64');
      const auth = `${first},${serverFirst},${withoutProof}`;
      const clientKey = HMAC(salted, 'Client Key');
      const signature = HMAC(H(clientKey), auth);
      const recovered = Buffer.from(proof.map((b, j) => b ^ signature[j]));
      if (!(m.username in passwords) || !crypto.timingSafeEqual(H(recovered), H(clientKey))) {
        m.outcome = false;
        return;
      }
      done = true;
      return Buffer.from('v=' + HMAC(HMAC(salted, 'Server Key'), auth).toString('base64'));
    };
    return m;
  };
}

function mechanismsFor(req) {
  const wanted = input.mechanisms || {};
  const mechs = {};
  for (const name of Object.keys(wanted)) {
    const cfg = wanted[name];
    if (name === 'ANONYMOUS') {
      mechs[name] = () => ({outcome: undefined, start() { this.outcome = true; this.username = 'anonymous'; }});
    } else if (name === 'PLAIN') {
      mechs[name] = () => ({outcome: undefined, start(r) {
        const [, user, pw] = r.toString('utf8').split('\0');
        this.username = user; this.outcome = cfg[user] === pw;
      }});
    } else if (name === 'EXTERNAL') {
      mechs[name] = () => ({outcome: undefined, start() {
        const sock = req.socket;
        const cert = sock.getPeerCertificate ? sock.getPeerCertificate() : null;
        this.outcome = Boolean(sock.authorized && cert && cert.subject);
        this.username = this.outcome ? cert.subject.CN : undefined;
      }});
    } else if (name === 'XOAUTH2') {
      mechs[name] = () => ({outcome: undefined, start(r) {
        const parts = r.toString('utf8').split('\x01');
        const user = (parts.find(p => p.startsWith('user=')) || '').slice(5);
        const auth = (parts.find(p => p.startsWith('auth=')) || '').slice(5);
        this.username = user; this.outcome = auth === `Bearer ${cfg[user]}`;
      }});
    } else if (name === 'SCRAM-SHA-512') {
      mechs[name] = scram(cfg, 'sha512', 64);
    } else if (name === 'SCRAM-SHA-256') {
      mechs[name] = scram(cfg, 'sha256', 32);
    } else {
      mechs[name] = () => ({outcome: undefined, start() { this.outcome = false; }});
    }
    const make = mechs[name];
    mechs[name] = () => {
      const m = make();
      const start = m.start.bind(m);
      const record = () => { if (m.outcome !== undefined) seen.logins.push({mechanism: name, user: m.username || null, ok: m.outcome}); };
      m.start = r => { const out = start(r); record(); return out; };
      if (m.step) { const step = m.step.bind(m); m.step = r => { const out = step(r); record(); return out; }; }
      return m;
    };
  }
  return mechs;
}

const c = rhea.create_container({id: 'rhea-ws'});
c.on('receiver_open', ctx => ctx.receiver.set_target({address: ctx.receiver.remote.attach.target.address}));
c.on('message', ctx => {
  const address = ctx.receiver.target.address;
  seen.messages.push({address, body: ctx.message.body});
  const waiting = (stored[address] = stored[address] || []);
  waiting.push(ctx.message.body);
  pump();
});
const senders = [];
c.on('sender_open', ctx => {
  ctx.sender.set_source({address: ctx.sender.remote.attach.source.address});
  senders.push(ctx.sender);
});
function pump() {
  for (const s of senders) {
    const q = stored[s.source.address] || [];
    while (q.length && s.sendable()) s.send({body: q.shift()});
    s.set_drained(q.length === 0);   // answer a drain once nothing is left to give
  }
}
c.on('sendable', pump);
c.on('sender_close', ctx => { const i = senders.indexOf(ctx.sender); if (i >= 0) senders.splice(i, 1); });
const ended = new Set();
function ended_one(ctx) {
  if (ended.has(ctx.connection)) return;
  ended.add(ctx.connection);
  for (let i = senders.length - 1; i >= 0; i--) if (senders[i].connection === ctx.connection) senders.splice(i, 1);
  if (++closed >= wantConnections) setTimeout(() => { console.log(JSON.stringify(seen)); process.exit(0); }, 200);
}
c.on('connection_close', ended_one);
c.on('disconnected', ended_one);
c.on('error', () => {});

const tls = input.tls;
const server = tls
  ? https.createServer({key: fs.readFileSync(tls.key), cert: fs.readFileSync(tls.cert),
                        ca: tls.ca ? fs.readFileSync(tls.ca) : undefined,
                        requestCert: Boolean(tls.ca), rejectUnauthorized: false})
  : http.createServer();
const wss = new WebSocket.Server({
  server,
  path: input.path || '/',
  handleProtocols: protocols => (protocols.has('amqp') ? 'amqp' : false),
});
wss.on('connection', (ws, req) => {
  seen.upgrades.push({path: req.url, protocols: req.headers['sec-websocket-protocol'] || null,
                      headers: {authorization: req.headers['authorization'] || null,
                                'x-tenant': req.headers['x-tenant'] || null}});
  c.sasl_server_mechanisms = mechanismsFor(req);
  c.websocket_accept(ws, {require_sasl: Boolean(input.mechanisms) && !('ANONYMOUS' in input.mechanisms)});
});
server.listen(0, '127.0.0.1', () => console.log(JSON.stringify({port: server.address().port})));
