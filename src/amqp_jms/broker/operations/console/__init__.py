"""The broker's web console (``amqp-jms broker --console``): queues, rates, messages,
connections and subscriptions, and the management actions, in a browser (docs/operations.md).

``app.py`` is the console itself (sans-I/O: requests in, responses out), ``pages.py`` its HTML,
``history.py`` the rate history, ``http.py`` the request/response values; the HTTP listener it
shares with ``/metrics`` is ``metrics_http.py``.
"""

from .app import Backend, Console
from .http import Request, Response

__all__ = ["Backend", "Console", "Request", "Response"]
