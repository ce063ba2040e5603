// rhea as a claims-based-security peer (Azure Service Bus's $cbs), on node's crypto: checks each
// put-token's SAS signature, audience and expiry, lets a link attach only with a good token for
// its address, and rejects a message once that token has expired. Input {key_name, key};
// prints {port}, then after the client closes {puts: [{audience, status}], accepted, rejected}.
const fs = require('fs');
const crypto = require('crypto');
const rhea = require('rhea');

const cfg = JSON.parse(fs.readFileSync(0, 'utf8') || '{}');
const seen = {puts: [], accepted: 0, rejected: 0};
const tokens = new Map();   // audience -> expiry (seconds)
let reply = null;           // our sender to the client's $cbs receiver

function check(token, audience) {
  const m = /^SharedAccessSignature (.*)$/.exec(token || '');
  if (!m) return 'not a SAS token';
  const f = Object.fromEntries(new URLSearchParams(m[1]));
  if (f.skn !== cfg.key_name) return 'unknown key name';
  const sig = crypto.createHmac('sha256', cfg.key).update(`${encodeURIComponent(f.sr)}\n${f.se}`).digest('base64');
  if (sig !== f.sig) return 'bad signature';
  if (Number(f.se) <= Date.now() / 1000) return 'expired';
  if (f.sr !== audience) return `token is for ${f.sr}`;
  return null;
}
const audienceOf = (ctx, address) => `sb://${ctx.connection.options.hostname || '127.0.0.1'}/${address}`;
const valid = audience => (tokens.get(audience) || 0) > Date.now() / 1000;

const c = rhea.create_container({id: 'rhea-cbs'});
c.on('receiver_open', ctx => {
  const address = ctx.receiver.remote.attach.target.address;
  if (address !== '$cbs' && !valid(audienceOf(ctx, address))) {
    ctx.receiver.close({condition: 'amqp:unauthorized-access', description: `no token for ${address}`});
    return;
  }
  ctx.receiver.set_target({address});
});
c.on('sender_open', ctx => {
  const address = ctx.sender.remote.attach.source.address;
  if (address === '$cbs') { reply = ctx.sender; ctx.sender.set_source({address}); return; }
  ctx.sender.close({condition: 'amqp:unauthorized-access', description: 'receiving is not served here'});
});
c.on('message', ctx => {
  const address = ctx.receiver.target.address;
  const msg = ctx.message;
  if (address === '$cbs') {
    const p = msg.application_properties || {};
    const why = p.operation !== 'put-token' ? 'not put-token' : check(msg.body, p.name);
    if (!why) tokens.set(p.name, Number(p.expiration));
    seen.puts.push({audience: p.name, type: p.type, status: why ? 401 : 200});
    reply.send({correlation_id: msg.message_id,
                application_properties: {'status-code': why ? 401 : 200, 'status-description': why || 'OK'}});
    return;
  }
  if (valid(audienceOf(ctx, address))) { seen.accepted++; ctx.delivery.accept(); }
  else { seen.rejected++; ctx.delivery.reject({condition: 'amqp:unauthorized-access', description: 'token expired'}); }
});
c.on('connection_close', () => setTimeout(() => { console.log(JSON.stringify(seen)); process.exit(0); }, 200));
const server = c.listen({port: 0, host: '127.0.0.1'});
server.on('listening', () => console.log(JSON.stringify({port: server.address().port})));
