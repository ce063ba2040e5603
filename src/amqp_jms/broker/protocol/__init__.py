"""The wire: the AMQP 1.0 listener and everything a peer's frames touch first.

``server`` accepts sockets (TLS from ``tls``, SASL from ``sasl``/``scram``, the failed-login
throttle from ``login_throttle``) and gives each a ``connection``; ``attach`` turns an attach into a
link on a node (addresses and filters read by ``terminus``), ``links`` holds a link's deliveries and
``transfers`` moves them between the wire and the routing layer. Imports only go down: to
``..routing``, ``..storage`` and the floor (``..limits``, ``..errors``); never to ``..operations``.
"""
