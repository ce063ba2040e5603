// rhea as a client of the embedded broker's WebSocket listener (npm `ws`): sends `count`
// messages to `address`, then receives them back. Input {url, address, count}; prints
// {protocol, received: [bodies]} or {error}.
const fs = require('fs');
const WebSocket = require('ws');
const rhea = require('rhea');

const cfg = JSON.parse(fs.readFileSync(0, 'utf8'));
const done = (r) => { console.log(JSON.stringify(r)); process.exit(0); };
setTimeout(() => done({error: 'timeout'}), 15000);
const c = rhea.create_container({id: 'rhea-ws-client'});
let protocol = null;
class Amqp extends WebSocket {
  constructor(url, protocols, options) {
    super(url, protocols, options);
    this.on('open', () => { protocol = this.protocol; });
  }
}
const ws = c.websocket_connect(Amqp);
const conn = c.connect({connection_details: ws(cfg.url, ['amqp']), reconnect: false});
conn.on('connection_error', ctx => done({error: String(ctx.connection.error && ctx.connection.error.condition)}));
conn.on('disconnected', ctx => { if (!ctx.connection.is_closed()) done({error: 'disconnected'}); });
const sender = conn.open_sender(cfg.address);
let sent = 0;
const received = [];
sender.on('sendable', () => { while (sender.sendable() && sent < cfg.count) sender.send({body: `m${sent++}`}); });
sender.on('accepted', () => {
  if (sender.settled_count === undefined) sender.settled_count = 0;
  if (++sender.settled_count === cfg.count) {
    const receiver = conn.open_receiver(cfg.address);
    receiver.on('message', ctx => {
      received.push(ctx.message.body);
      if (received.length === cfg.count) { conn.close(); done({protocol, received}); }
    });
  }
});
