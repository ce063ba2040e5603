"""Sans-IO driver of proton's AMQP engine, shared by the client's provider and the broker.

Nothing in this package imports asyncio, socket, threading or time (a test enforces it).
``engine.raw`` gives both users' per-delivery hot paths proton-c through cffi.
"""

from .core import Engine, EngineError, SaslConfig

__all__ = ["Engine", "EngineError", "SaslConfig"]
