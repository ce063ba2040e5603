// A rhea server that answers every link and reports, per link the client opened, the role it
// asked for and the source's default outcome as rhea decoded it (descriptor and fields).
const rhea = require('rhea');
const c = rhea.create_container();
const server = c.listen({port: 0, host: '127.0.0.1'});
const seen = [];
server.on('listening', () => console.log(JSON.stringify({port: server.address().port})));
function report(link, client_role) {
  const s = link.remote.attach.source || {};
  const d = s.default_outcome;
  seen.push({name: link.name, client_role: client_role, address: s.address === undefined ? null : s.address,
             default_outcome: d && d.descriptor !== undefined ? {
               descriptor: Number(d.descriptor.value !== undefined ? d.descriptor.value : d.descriptor),
               fields: d.value} : null});
}
c.on('sender_open', ctx => {   // the client receives: a consumer or a browser
  const s = ctx.sender.remote.attach.source;
  ctx.sender.set_source({address: s.address, distribution_mode: s.distribution_mode});
  report(ctx.sender, 'receiver');
});
c.on('sendable', ctx => ctx.sender.set_drained(true));  // nothing to send: answer a drain at once
c.on('receiver_open', ctx => {   // the client sends: a producer
  ctx.receiver.set_target({address: ctx.receiver.remote.attach.target.address});
  report(ctx.receiver, 'sender');
});
c.on('connection_close', () => { console.log(JSON.stringify(seen)); process.exit(0); });
