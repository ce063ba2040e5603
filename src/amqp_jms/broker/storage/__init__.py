"""The disk: the broker's message and its bytes, the stores, paging and large-message files.

``message`` is the broker's message (``message_bytes`` reads and rewrites its encoded sections);
``store`` is the store interface and the in-memory store, ``sqlite_store`` the durable one;
``spill`` pages a deep queue's messages to a file; ``large`` spools and streams large messages.
The lowest layer: it imports only the floor (``..limits``, ``..errors``) and the rest of amqp_jms.
"""
