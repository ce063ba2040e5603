"""Where a message goes: the broker core, its nodes, queues and the rules on the way.

``core`` holds the broker-wide state (one per running broker); ``nodes`` is the router over
queues and topics; ``queue`` a queue's messages and consumers; ``flowgate`` the address-full
policy; ``prefixes`` ActiveMQ-style address prefixes; ``temporary`` temporary nodes;
``transactions`` local transactions; ``selectors`` JMS selectors; ``dead_letter`` where a message
that failed goes; ``depth`` paging-depth checks; ``authorization`` who may do what on which
address; ``counters`` the live metric counters; ``extract`` operator moves out of a queue;
``recovery`` the rebuild from a store at start. Imports only go down: to ``..storage`` and the
floor (``..limits``, ``..errors``); never to ``..protocol`` or ``..operations``. What must travel up
(a refused attach, a ``$management`` request) is declared in ``..errors`` or as the small
interface ``core.ManagementEndpoint`` that the operations layer implements.
"""
