"""Where a message goes: the broker core, its nodes, queues and the rules on the way.

``core`` holds the broker-wide state (one per running broker); ``nodes`` is the router over
queues and topics; ``queue`` a queue's messages and consumers; ``flowgate`` the address-full
policy; ``prefixes`` ActiveMQ-style address prefixes; ``temporary`` temporary nodes;
``transactions`` local transactions; ``selectors`` JMS selectors; ``dead_letter`` where a message
that failed goes; ``depth`` how deeply a message nests (``max_value_depth``), and ``requests``
a service node's request read within its limits; ``authorization`` who may do what on which
address, ``tokens`` the bearer tokens XOAUTH2 accepts and ``cbs`` the ``$cbs`` node's grants;
``txn_outcomes`` committed transactions' outcomes kept for a client to ask about; ``counters``
the live metric counters; ``extract`` operator moves out of a queue; ``recovery`` the rebuild
from a store at start. Imports only go down: to ``..storage`` and the
floor (``..limits``, ``..errors``); never to ``..protocol`` or ``..operations``. What must travel up
(a refused attach, a ``$management`` request) is declared in ``..errors`` or as the small
interface ``core.ManagementEndpoint`` that the operations layer implements.
"""
