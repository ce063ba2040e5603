"""The wire: the AMQP 1.0 listener and everything a peer's frames touch first.

``server`` accepts sockets (TLS from ``tls``, SASL from ``sasl``/``scram``, the failed-login
throttle from ``login_throttle``, AMQP over WebSocket unwrapped by ``websocket``, a frame's own
nesting bounded by ``frame_depth`` before proton decodes it) and gives each a ``connection``;
``attach`` turns an attach into a link on a node (addresses and filters read by ``terminus``),
``links`` holds a link's deliveries and ``transfers`` moves them between the wire and the routing
layer, through proton-c directly (``_fast``); ``cbs_link`` is a connection's side of ``$cbs``.
Imports only go down: to ``..routing``, ``..storage`` and the floor (``..limits``, ``..errors``);
never to ``..operations``.
"""
