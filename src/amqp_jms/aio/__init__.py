"""amqp_jms.aio: the JMS API for asyncio, on the same core as the blocking API.

::

    from amqp_jms.aio import AsyncConnectionFactory

    async with await AsyncConnectionFactory(url).create_connection() as conn:
        session = await conn.create_session()
        producer = await session.create_producer(Queue("q"))
        await producer.send(session.create_text_message("hi"))
        await conn.start()
        consumer = await session.create_consumer(Queue("q"))
        async for message in consumer: ...

    async with await AsyncConnectionFactory(url).create_context() as ctx:
        await ctx.create_producer().send(Queue("q"), "hi")
        body = await (await ctx.create_consumer(Queue("q"))).receive_body(str, 1000)

One core, two faces: every object wraps its blocking twin and awaits the waits the core
describes (``client.waits.ProviderWait``, through ``aio._wait``), or runs the core's rare
blocking operations in a worker thread; nothing of JMS is implemented twice. Every public
method of a blocking class has its twin here (``tests/unit/test_aio_parity.py``).
"""

from ._browser import AsyncQueueBrowser
from ._consumer import AsyncConsumer
from ._context import AsyncJMSConsumer, AsyncJMSContext, AsyncJMSProducer
from ._core import AsyncConnection, AsyncConnectionFactory, AsyncSession
from ._producer import AsyncProducer
from ._server_sessions import AsyncServerSessionPool

__all__ = [
    "AsyncConnection",
    "AsyncConnectionFactory",
    "AsyncConsumer",
    "AsyncJMSConsumer",
    "AsyncJMSContext",
    "AsyncJMSProducer",
    "AsyncProducer",
    "AsyncQueueBrowser",
    "AsyncServerSessionPool",
    "AsyncSession",
]
