// rhea as a prefix-addressing peer, the way ActiveMQ and Artemis address nodes: its Open offers
// queue-prefix=queue:// and topic-prefix=topic://, and the address prefix alone decides a node's
// type (topic:// fans out to every consumer, anything else is a queue: one consumer per message).
// Temporary queues are named temp-queue://ID:rhea-<n>. On the client's close it prints every link
// address the client attached and every message it routed (its to / reply-to as rhea read them).
const rhea = require('rhea');
const c = rhea.create_container({id: 'rhea-prefix-peer'});
const server = c.listen({
  port: 0, host: '127.0.0.1',
  properties: {'queue-prefix': 'queue://', 'topic-prefix': 'topic://'},
  offered_capabilities: ['ANONYMOUS-RELAY'],
});
const links = [];
const routed = [];
const consumers = {};  // address -> [sender links]
const queued = {};     // address -> [messages waiting for a consumer]
let temps = 0;
server.on('listening', () => console.log(JSON.stringify({port: server.address().port})));

c.on('sender_open', (ctx) => {  // the client receives
  const s = ctx.sender.remote.attach.source || {};
  const address = s.dynamic ? 'temp-queue://ID:rhea-' + (++temps) : s.address;
  ctx.sender.set_source({address: address});
  links.push({client_role: 'receiver', address: address, dynamic: !!s.dynamic});
  (consumers[address] = consumers[address] || []).push(ctx.sender);
  ctx.sender.node_address = address;
  flush(address);
});
c.on('receiver_open', (ctx) => {  // the client sends
  const t = ctx.receiver.remote.attach.target || {};
  const address = t.dynamic ? 'temp-queue://ID:rhea-' + (++temps) : (t.address === undefined ? null : t.address);
  ctx.receiver.set_target({address: address});
  links.push({client_role: 'sender', address: address, dynamic: !!t.dynamic});
  ctx.receiver.node_address = address;
});
c.on('message', (ctx) => {
  const m = ctx.message;
  const address = ctx.receiver.node_address || m.to;
  routed.push({address: address, to: m.to === undefined ? null : m.to,
               reply_to: m.reply_to === undefined ? null : m.reply_to});
  if (address.startsWith('topic://')) {
    (consumers[address] || []).filter((s) => s.is_open()).forEach((s) => s.send(m));
  } else {
    (queued[address] = queued[address] || []).push(m);
    flush(address);
  }
});
c.on('sendable', (ctx) => flush(ctx.sender.node_address));
function flush(address) {
  const waiting = queued[address] || [];
  for (const s of (consumers[address] || [])) {
    while (waiting.length && s.is_open() && s.sendable()) s.send(waiting.shift());
  }
}
c.on('connection_close', () => { console.log(JSON.stringify({links: links, routed: routed})); process.exit(0); });
