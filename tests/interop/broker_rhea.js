// rhea peer for the embedded broker's interop tests (tests/interop/test_broker_rhea.py).
// JSON on stdin: {url, mode: "send"|"receive", ...}; prints one JSON result line.
const rhea = require('rhea');

let input = '';
process.stdin.on('data', (d) => { input += d; });
process.stdin.on('end', () => main(JSON.parse(input)));

function done(result) {
  console.log(JSON.stringify(result));
  process.exit(0);
}

function main(cfg) {
  const u = new URL(cfg.url);
  const container = rhea.create_container(cfg.container_id ? { id: cfg.container_id } : {});
  const conn = container.connect({ host: u.hostname, port: Number(u.port), reconnect: false });
  conn.on('connection_error', (ctx) => done({ error: String(ctx.connection.error && ctx.connection.error.condition) }));
  conn.on('disconnected', (ctx) => { if (!ctx.connection.is_closed()) done({ error: 'disconnected' }); });
  if (cfg.mode === 'send') send(conn, cfg);
  else receive(conn, cfg);
  setTimeout(() => done({ error: 'timeout' }), cfg.timeout_ms || 15000);
}

function send(conn, cfg) {
  const sender = conn.open_sender({ target: { address: cfg.address, capabilities: cfg.capabilities || [] } });
  const outcomes = [];
  let i = 0;
  sender.on('sendable', () => {
    while (sender.sendable() && i < cfg.messages.length) {
      const m = cfg.messages[i++];
      sender.send({ body: m.body, application_properties: m.properties || {}, priority: m.priority,
                    durable: !!m.durable, to: m.to });
    }
  });
  const record = (what) => () => {
    outcomes.push(what);
    if (outcomes.length === cfg.messages.length) { conn.close(); done({ outcomes }); }
  };
  sender.on('accepted', record('accepted'));
  sender.on('rejected', record('rejected'));
  sender.on('released', record('released'));
  sender.on('modified', record('modified'));
}

function receive(conn, cfg) {
  const source = { address: cfg.address, capabilities: cfg.capabilities || [] };
  if (cfg.selector) source.filter = rhea.filter.selector(cfg.selector);
  if (cfg.durable) { source.durable = 2; source.expiry_policy = 'never'; }
  const opts = { source, autoaccept: true, credit_window: cfg.credit || 100 };
  if (cfg.name) opts.name = cfg.name;
  const receiver = conn.open_receiver(opts);
  const bodies = [];
  const finish = () => {
    if (cfg.detach) receiver.detach(); else receiver.close();
    setTimeout(() => { conn.close(); done({ bodies }); }, 200);
  };
  receiver.on('receiver_open', () => { if (cfg.count === 0) finish(); });
  receiver.on('receiver_error', (ctx) => done({ error: String(ctx.receiver.error && ctx.receiver.error.condition), bodies }));
  receiver.on('message', (ctx) => {
    bodies.push(ctx.message.body);
    if (bodies.length === cfg.count) finish();
  });
  if (cfg.idle_ms) setTimeout(finish, cfg.idle_ms);
}
