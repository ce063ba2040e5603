"""Running the broker: assembling the layers, configuring, watching and managing them.

``broker`` assembles store, core and listener into ``Broker``/``AsyncBroker``; ``cli`` is the
command line and ``config`` its file; ``metrics`` the snapshots and Prometheus text over the
routing layer's counters, served by ``metrics_http``; ``management`` the ``$management`` node
(``management_entities`` what it lists, ``message_preview`` a stored message as an operator
sees it); ``console`` the web console, which asks the broker through ``console_backend``. The top
layer: it may import every other one, and none
imports it.
"""
