"""BrokerLimits: safe defaults, validation, the config-table mapping and the CLI flags."""

from __future__ import annotations

import pytest

from amqp_jms.broker.limits import AddressFullPolicy, BrokerLimits, MiB
from amqp_jms.broker.operations.cli import build_parser, limits_from_args


def test_defaults_bound_what_a_peer_controls() -> None:
    lim = BrokerLimits()
    assert lim.max_message_size == 100 * MiB
    assert lim.handshake_timeout == 10.0
    assert lim.max_value_depth == 100
    assert lim.address_full_policy is AddressFullPolicy.PAGE
    assert lim.max_connections > 0 and lim.max_connections_per_user > 0
    assert lim.max_sessions_per_connection > 0 and lim.max_links_per_connection > 0


def test_from_mapping_names_the_bad_key() -> None:
    lim = BrokerLimits.from_mapping({"max-message-size": 1024, "address_full_policy": "block"})
    assert lim.max_message_size == 1024 and lim.address_full_policy is AddressFullPolicy.BLOCK
    with pytest.raises(ValueError, match="max_mesage_size"):
        BrokerLimits.from_mapping({"max_mesage_size": 1})
    with pytest.raises(ValueError, match="handshake_timeout"):
        BrokerLimits.from_mapping({"handshake_timeout": "soon"})
    with pytest.raises(ValueError, match="max_connections"):
        BrokerLimits.from_mapping({"max_connections": -1})


def test_cli_flags_override_only_what_is_given() -> None:
    args = build_parser().parse_args(["--max-message-size", "4096", "--address-full-policy", "FAIL"])
    lim = limits_from_args(args)
    assert lim.max_message_size == 4096
    assert lim.address_full_policy is AddressFullPolicy.FAIL
    assert lim.max_frame_size == BrokerLimits().max_frame_size
