"""A commit whose answer went with the connection: told truly when the peer can be asked.

Qpid JMS's rule, and ours for every peer that cannot be asked: a commit whose Discharge got no
answer before the connection was lost fails with TransactionRolledBackException, although the
peer may have committed (an application that retries then sends its batch twice). A peer whose
coordinator keeps outcomes (``amqp-jms:txn-outcomes``; the wrapped session's
``in_doubt_commit()`` gives a token) is asked on the next connection, by the transacted
session re-created there (``commit_outcome``); the commit then returns if the peer committed,
raises TransactionRolledBackException if it did not, and raises a plain JMSException saying the
outcome is unknown when it cannot be learnt (the broker forgot, no reconnect in time). Failover
to another broker cannot ask: Qpid JMS's answer again.

The asking waits for the reconnect, so it runs on a thread of its own: the loss is reported on
the lost connection's I/O thread, which must not wait.
"""

from __future__ import annotations

import threading
import time
from typing import TYPE_CHECKING, Any

from ...exceptions import JMSException, TransactionRolledBackException
from ..base import CommitOutcome
from .futures import Future, reject, resolve

if TYPE_CHECKING:
    from .handles import FailoverSession
    from .state import FailoverState

__all__ = ["CommitInDoubt"]


class CommitInDoubt:
    """One commit on connection ``inner``'s session, whose answer may be lost: ``lost()`` (from
    the connection's loss or the commit's I/O failure, whichever comes first) settles ``out``."""

    def __init__(self, state: FailoverState, session: FailoverSession, inner: Any, out: Future[None]) -> None:
        self.state = state
        self.session = session
        self.inner = inner
        self.out = out
        self._once = threading.Lock()

    def lost(self, cause: BaseException | None = None) -> None:
        if not self._once.acquire(blocking=False):
            return  # the other report of the same loss
        token = self.inner.in_doubt_commit()
        if token is None:  # the peer cannot be asked: Qpid JMS's answer
            if isinstance(cause, TransactionRolledBackException):
                reject(self.out, cause)
                return
            why = str(cause) if cause is not None else (
                "the connection was lost before the commit's outcome arrived")
            reject(self.out, _rolled_back(why, cause))
            return
        asking = threading.Thread(target=self._ask, args=(token,), name="amqp-jms-commit-in-doubt",
                                  daemon=True)
        asking.start()

    def _ask(self, token: object) -> None:
        timeout = self.state.request_timeout()
        deadline = None if timeout is None else time.monotonic() + timeout
        last: BaseException | None = None
        while not self.out.done():
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                break
            try:
                self.state.wait_online(left, "commit")
                new = self.session.current()
                if new is None:  # lost again, or not yet re-created: wait for the next one
                    time.sleep(0.01)
                    continue
                answer = new.commit_outcome(token).result(left)
            except (JMSException, TimeoutError) as e:
                last = e
                if self.state.ended() is not None or self.session.closed:
                    break
                continue
            if answer is CommitOutcome.COMMITTED:
                resolve(self.out)
            elif answer is CommitOutcome.ROLLED_BACK:
                reject(self.out, _rolled_back("the connection was lost before the commit's answer arrived, "
                                              "and the broker says it did not commit"))
            elif answer is CommitOutcome.NOT_ASKED:  # another broker now: Qpid JMS's answer
                reject(self.out, _rolled_back("the connection was lost before the commit's outcome arrived "
                                              "(failover reached another broker)"))
            else:
                reject(self.out, JMSException(
                    "the commit's outcome is unknown: the connection was lost before its answer arrived, "
                    "and the broker cannot tell any more (max_txn_outcomes / txn_outcome_seconds)",
                    "amqp:transaction:unknown-id"))
            return
        why = f": {last}" if last is not None else ""
        reject(self.out, JMSException(
            "the commit's outcome is unknown: the connection was lost before its answer arrived, and "
            f"the broker could not be asked{why}", None, last))


def _rolled_back(why: str, cause: BaseException | None = None) -> TransactionRolledBackException:
    """The answer when the commit did not happen, or cannot be learnt from this peer."""
    return TransactionRolledBackException(f"the commit failed and the transaction was rolled back: {why}",
                                          None, cause)
